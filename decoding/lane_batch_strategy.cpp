#include "decoding/lane_batch_strategy.h"

#include <algorithm>

#include "common/error.h"

namespace vkspec {
namespace {

int64_t checked_lanes(const std::string& method, const std::vector<StrategyInputs>& in, int64_t lanes) {
  if (lanes < 1 || lanes > static_cast<int64_t>(in.size()))
    throw Error(method + ": " + std::to_string(lanes) + " lanes for " + std::to_string(in.size()) + " images");
  return lanes;
}

}  // namespace

LaneBatchStrategy::LaneBatchStrategy(std::string method, const ModelSet& models, const std::vector<StrategyInputs>& in,
                                     int64_t max_queries, int64_t scratch_slots, int64_t lanes)
    : BatchStrategy(method, models, in, max_queries, scratch_slots, checked_lanes(method, in, lanes)),
      lane_image_(static_cast<size_t>(lanes), -1) {}

std::vector<size_t> LaneBatchStrategy::admit() {
  std::vector<size_t> started;
  for (size_t k = 0; k < lanes(); ++k) {
    if (lane_busy(k) || next_input_ == images_.size()) continue;
    const bool refill = lane_image_[k] >= 0;  // the first images' captions came with the session
    lane_image_[k] = static_cast<int64_t>(next_input_++);
    started.push_back(k);
    if (refill) record_caption_prefill(k);
  }
  return started;
}

void LaneBatchStrategy::record_caption_prefill(size_t lane) {
  TargetSession& t = target();
  const GptConfig& cfg = t.config();
  // In the chunks TargetSession's own prefill runs, so the lane's keys and values are the ones
  // its image gets alone; the other lanes pad.
  const int64_t chunk = t.model().options().max_queries;
  for (int64_t first = 0; first < cfg.cls_token_num - 1; first += chunk) {
    const int64_t n = std::min(chunk, cfg.cls_token_num - 1 - first);
    std::vector<GptQueries> queries;
    for (size_t k = 0; k < lanes(); ++k) {
      if (k != lane) {
        queries.push_back(padding_queries(k, n));
        continue;
      }
      GptQueries q = GptQueries::causal(cfg, first, n, {}, {}, t.cache().slots());
      q.conditions = lane_conditions(k);
      queries.push_back(std::move(q));
    }
    t.forward(t.batch(GptQueries::ragged(queries)));
  }
}

std::vector<const Condition*> LaneBatchStrategy::lane_conditions(size_t k) {
  const Image& im = images_[static_cast<size_t>(std::max<int64_t>(lane_image_[k], 0))];
  std::vector<const Condition*> c = {im.in.condition.get()};
  if (target().rows() == 2 * target().images()) c.push_back(c[0]->null_form());  // the null row, with CFG
  return c;
}

void LaneBatchStrategy::pad_queries(GptQueries& q, ops::AttentionMaskBuilder& mb, int64_t real, int64_t T, int64_t last,
                                    int64_t first_spare) const {
  const int64_t seq = models_.target->config().seq_len();
  // A lane prefilling a long prompt (Janus-Pro's, tens of positions) makes T exceed the scratch
  // slots the method asked for: padding queries then share slots, after the method's own scratch.
  // No mask lets any query see a padding query's keys and values, so sharing is safe.
  const int64_t spare = std::max<int64_t>(1, target().cache().slots() - seq - first_spare);
  for (int64_t i = real; i < T; ++i) {
    q.positions.push_back(last);
    q.slots.push_back(static_cast<uint32_t>(seq + first_spare + (i - real) % spare));
    mb.see_prefix(i, last + 1);
    q.tokens.push_back(0);
  }
}

GptQueries LaneBatchStrategy::padded_lane_queries(size_t k, GptQueries q, ops::AttentionMaskBuilder& mb, int64_t real,
                                                  int64_t T, int64_t first_spare) {
  int64_t last = target().config().cls_token_num;
  for (int64_t p : q.positions) last = std::max(last, p);
  pad_queries(q, mb, real, T, last, first_spare);
  q.mask = mb.pack();
  q.conditions = lane_conditions(k);
  return q;
}

GptQueries LaneBatchStrategy::padding_queries(size_t k, int64_t T) {
  ops::AttentionMaskBuilder mb(T, target().cache().slots());
  return padded_lane_queries(k, {}, mb, 0, T, 0);
}

}  // namespace vkspec
