#include "decoding/sjd_pac_batch_strategy.h"

#include <algorithm>

namespace vkspec {
SjdPacBatchStrategy::SjdPacBatchStrategy(const ModelSet& models, const std::vector<StrategyInputs>& in,
                                         const SjdPacOptions& opt, int64_t lanes)
    : LaneBatchStrategy("sjd-pac", models, in,
                        sjd_pac_max_queries(check_sjd_pac_options(opt, models.target->config().vocab_size)),
                        sjd_pac_max_queries(opt), lanes),
      opt_(opt),
      lanes_(static_cast<size_t>(lanes)),
      rows_(*models.ctx, opt, models.target->config(), lanes),
      step_rows_(*models.ctx, opt, lanes * sjd_pac_max_queries(opt), vocab(), "sjd-pac") {}

SjdPacBatchStrategy::~SjdPacBatchStrategy() = default;

int64_t SjdPacBatchStrategy::plan() {
  for (size_t k : admit()) {
    const uint64_t seed = images_[static_cast<size_t>(lane_image(k))].in.seed;
    lanes_[k] =
        Lane{std::make_unique<SjdPacImage>(opt_, models_.target->config(), seed, rows_.store(static_cast<int64_t>(k)))};
  }
  int64_t T = 1;
  for (size_t k = 0; k < lanes_.size(); ++k) {
    Lane& l = lanes_[k];
    l.active = lane_busy(k);
    if (!l.active) continue;
    const Image& im = images_[static_cast<size_t>(lane_image(k))];
    l.c = im.committed;
    l.nodes = l.state->build_tree(target().stream(), im.grid, l.c);
    l.queries = static_cast<int64_t>(l.nodes.size() + l.state->repairs().size());
    T = std::max(T, l.queries);
  }
  return T;
}

GptQueries SjdPacBatchStrategy::lane_queries(size_t k, int64_t T) {
  const Lane& l = lanes_[k];
  if (!l.active) return padding_queries(k, T);
  const TargetSession& t = target();
  const Image& im = images_[static_cast<size_t>(lane_image(k))];
  GptQueries q;
  ops::AttentionMaskBuilder mb(T, t.cache().slots());
  add_candidate_tree_queries(t, l.nodes, l.c, l.state->repairs(), im.grid, q, mb);
  const int64_t scratch =
      std::count_if(l.nodes.begin(), l.nodes.end(), [](const SjdPacImage::Node& n) { return !n.canonical; });
  return padded_lane_queries(k, std::move(q), mb, l.queries, T, scratch);
}

void SjdPacBatchStrategy::commit_lane(size_t k, int64_t T, StepEvent& e) {
  Lane& l = lanes_[k];
  const size_t image = static_cast<size_t>(lane_image(k));
  Image& im = images_[image];
  const int64_t first = static_cast<int64_t>(k) * T;
  l.state->commit(l.nodes, step_rows_.image(first, static_cast<int64_t>(l.nodes.size())), first, im.grid, im.committed,
                  e, [&](uint32_t token, int64_t n) { return checked_token(token, image, n); });
  ++im.nfe;
  ++l.steps;
}

void SjdPacBatchStrategy::decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) {
  TargetSession& t = target();
  t.set_stage(stage::kSampling);
  const int64_t T = plan();
  step_rows_.begin(static_cast<int64_t>(lanes_.size()) * T);
  std::vector<GptQueries> queries;
  for (size_t k = 0; k < lanes_.size(); ++k) {
    Lane& l = lanes_[k];
    if (l.active)
      l.state->record_rows(t.stream(), l.nodes, l.c, step_rows_, static_cast<int64_t>(k) * T,
                           static_cast<uint32_t>(l.steps));
    queries.push_back(lane_queries(k, T));
  }
  const GptOutputs fwd = t.forward(t.batch(GptQueries::ragged(queries)));
  const StrategyInputs& in = images_[0].in;  // the settings every image shares (batch_strategy.cpp)
  step_rows_.record(t.stream(), t.ctx(), fwd.logits, in.sampler.op_params(vocab(), 0, ops::SampleMode::None, 0));
  t.submit_and_wait();
  step_rows_.download(t.ctx());
  for (size_t k = 0; k < lanes_.size(); ++k) {
    if (!lanes_[k].active) continue;
    const size_t image = static_cast<size_t>(lane_image(k));
    commit_lane(k, T, events[image]);
    advanced[image] = true;
  }
}

}  // namespace vkspec
