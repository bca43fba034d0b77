#include "decoding/window_strategy.h"

#include <chrono>
#include <cstring>

#include "engine/ops/speculative.h"
#include "engine/vk/error.h"

namespace vkspec {
namespace {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace

WindowOptions parse_window_options(const MethodOptions& o, const std::string& method, AcceptRule::Kind accept) {
  check_options(o, method, strategy_options(method));
  WindowOptions w;
  w.window = option_int(o, method, "window", w.window, 1, 1024);
  const std::string init = option_choice(o, method, "init", draft_init_name(w.init), {"random", "left", "above"});
  w.init = init == "random" ? DraftInit::Random : init == "left" ? DraftInit::Left : DraftInit::Above;
  w.accept = parse_accept_options(o, method, accept);
  return w;
}

const char* draft_init_name(DraftInit i) {
  switch (i) {
    case DraftInit::Random: return "random";
    case DraftInit::Left: return "left";
    case DraftInit::Above: return "above";
  }
  return "?";
}

WindowStrategy::WindowStrategy(const ModelSet& models, const StrategyInputs& in, const char* method, DraftRule rule,
                               const WindowOptions& opt, const Faults& faults)
    : SpeculativeStrategy(models, in, method, opt.window), rule_(rule), opt_(opt) {
  faults_ = faults;
  set_accept_rule(opt.accept);
  Context& ctx = *models.ctx;
  drafts_.assign(grid_.size(), 0);
  q_ = ctx.tensor(DType::F32, {image_tokens(), vocab()}, std::string(method) + " draft distributions");
  row_drafts_ = ctx.tensor(DType::U32, {max_drafts() + 1}, std::string(method) + " row drafts", MemoryUsage::Upload);
}

uint32_t WindowStrategy::token_at(int64_t n) const {
  return n < committed_ ? static_cast<uint32_t>(grid_[static_cast<size_t>(n)]) : drafts_[static_cast<size_t>(n)];
}

void WindowStrategy::initialise(int64_t end) {
  CommandStream& s = stream();
  const int64_t V = vocab(), W = models_.target->config().grid_size;
  const TensorView flat = q_.view().reshape({image_tokens() * V});
  std::vector<int64_t> point_mass;
  for (int64_t n = ready_; n < end; ++n) {
    DraftInit how = opt_.init;
    if (how == DraftInit::Above && n < W) how = DraftInit::Left;  // the first row has nothing above
    if (how == DraftInit::Left && n == 0) how = DraftInit::Random;
    uint32_t tok = 0;
    if (how == DraftInit::Random) {
      // (bits * V) >> 32 is uniform to within V / 2^32, far below anything a test could see.
      const uint32_t bits =
          philox::bits(in_.seed, static_cast<uint32_t>(n), philox::purpose_word(philox::Purpose::DraftInit), 0);
      tok = static_cast<uint32_t>((static_cast<uint64_t>(bits) * static_cast<uint64_t>(V)) >> 32);
      s.fill(q_.view().rows(n, 1), float_bits(1.0f / static_cast<float>(V)));
    } else {
      tok = token_at(how == DraftInit::Left ? n - 1 : n - W);
      s.fill(q_.view().rows(n, 1), 0u);
      point_mass.push_back(n);
    }
    drafts_[static_cast<size_t>(n)] = tok;
  }
  for (int64_t n : point_mass) s.fill(flat.rows(n * V + drafts_[static_cast<size_t>(n)], 1), float_bits(1.0f));
  ready_ = std::max(ready_, end);
}

StepEvent WindowStrategy::step() {
  if (done()) throw Error(std::string(name()) + ": step() after the image is complete");
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t c = committed_, D = drafts_at(c), Q = queries_for(c, D);
  const uint32_t round = static_cast<uint32_t>(step_);
  initialise(c + D);
  if (Q > D) stream().fill(q_.view().rows(c + D, 1), 0u);  // the row without a draft: residual = p

  const std::vector<uint32_t> window(drafts_.begin() + c, drafts_.begin() + c + D);
  const GptBatch& batch = target_batch(c, Q, std::vector<uint32_t>(window.begin(), window.begin() + (Q - 1)));
  ops::SampleMode mode = ops::SampleMode::None;
  uint32_t purpose = 0;
  if (rule_ == DraftRule::Fresh) {
    mode = ops::SampleMode::Categorical;
    purpose = philox::purpose_word(philox::Purpose::Draft, round);
  } else if (rule_ == DraftRule::SharedGumbel) {
    mode = ops::SampleMode::GumbelMax;
    purpose = philox::purpose_word(philox::Purpose::DraftGumbel);
  }
  const TensorView p = record_target(batch, c, Q, mode, purpose);

  std::vector<uint32_t> rows(window);
  rows.resize(static_cast<size_t>(Q), ops::kNoToken);
  models_.ctx->upload(row_drafts_, 0, rows.data(), rows.size() * 4);
  const TensorView q_rows = q_.view().rows(c, Q);
  record_verify(p, q_rows, row_drafts_.view().rows(0, Q), c, Q, round);
  stream().copy(faults_.q_unfiltered ? unfiltered_p(Q) : p, q_rows);  // next step's q is this step's p
  const Outcome o = finish(Q);

  StepEvent e;
  const int64_t j = commit(e, c, Q, window, o);
  for (int64_t t = j + 1; t < Q; ++t)
    drafts_[static_cast<size_t>(c + t)] = rule_ == DraftRule::Coupled ? o.resolved[static_cast<size_t>(t)]
                                                                      : o.fresh[static_cast<size_t>(t)];
  ready_ = c + Q;
  close_event(e, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return e;
}

}  // namespace vkspec
