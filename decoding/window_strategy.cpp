#include "decoding/window_strategy.h"

#include "decoding/point_mass.h"
#include "engine/model/draft_heads.h"
#include "engine/ops/det_math.h"
#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"
#include "common/error.h"

namespace vkspec {

std::vector<OptionSpec> window_option_specs() {
  return {
      OptionSpec::integer("window", 16, 1, 1024, "drafts verified per forward (the target runs window + 1 queries)"),
      OptionSpec::choice("init", "above", {"random", "left", "above", "heads"},
                         "how a position entering the window is first drafted: a uniform sample, the token to "
                         "its left or above it, or the draft heads' proposal (--heads)")};
}

OptionSpec coupling_strength_spec() {
  return OptionSpec::number("alpha", 1.0, 0.0, 1.0,
                            "coupling strength: each next draft is the coupled one with probability alpha, else an "
                            "independent sample of p (0: SJD's drafts, 1: full coupling; lossless at every value)");
}

WindowOptions parse_window_options(const OptionValues& o, const AcceptRuleSlot& slot) {
  WindowOptions w;
  w.window = o.integer("window");
  if (o.declares("alpha")) w.alpha = o.number("alpha");
  const std::string& init = o.choice("init");
  w.init = init == "random"  ? DraftInit::Random
           : init == "left"  ? DraftInit::Left
           : init == "heads" ? DraftInit::Heads
                             : DraftInit::Above;
  w.accept = parse_accept_choice(o, slot);
  return w;
}

StrategyNeeds window_needs(const OptionValues& o) {
  StrategyNeeds n;
  n.heads = o.choice("init") == "heads";
  return n;
}

int64_t window_max_queries(const OptionValues& o) { return o.integer("window") + 1; }

const char* draft_init_name(DraftInit i) {
  switch (i) {
    case DraftInit::Random: return "random";
    case DraftInit::Left: return "left";
    case DraftInit::Above: return "above";
    case DraftInit::Heads: return "heads";
  }
  return "?";
}

WindowStrategy::WindowStrategy(std::string method, const ModelSet& models, const StrategyInputs& in, DraftRule rule,
                               const WindowOptions& opt)
    : SpeculativeStrategy(std::move(method), models, in, opt.window), rule_(rule), opt_(opt) {
  set_accept_rule(opt.accept);
  Context& ctx = *models.ctx;
  drafts_.assign(grid_.size(), 0);
  if (opt.init == DraftInit::Heads) {
    heads_ = std::make_unique<HeadProposals>(models, name(), 1, max_drafts() + 1);
    rounds_.assign(grid_.size(), 0);
  }
  q_ = ctx.tensor(DType::F32, {image_tokens(), vocab()}, name() + " draft distributions");
  row_drafts_ = ctx.tensor(DType::U32, {max_drafts() + 1}, name() + " row drafts", MemoryUsage::Upload);
}

InitialDraft initial_draft(DraftInit how, uint64_t seed, int64_t n, int64_t vocab, int64_t grid_size,
                           const std::function<uint32_t(int64_t)>& token_at) {
  if (how == DraftInit::Heads) how = DraftInit::Above;
  if (how == DraftInit::Above && n < grid_size) how = DraftInit::Left;  // the first row has nothing above
  if (how == DraftInit::Left && n == 0) how = DraftInit::Random;
  if (how != DraftInit::Random) return {token_at(how == DraftInit::Left ? n - 1 : n - grid_size), false};
  // (bits * V) >> 32 is uniform to within V / 2^32, far below anything a test could see.
  const uint32_t bits =
      philox::bits(seed, static_cast<uint32_t>(n), philox::purpose_word(philox::Purpose::DraftInit), 0);
  return {static_cast<uint32_t>((static_cast<uint64_t>(bits) * static_cast<uint64_t>(vocab)) >> 32), true};
}

uint32_t next_window_draft(const WindowOptions& opt, DraftRule rule, bool exact_successor, uint64_t seed, int64_t n,
                           uint32_t round, const NextDraftCandidates& row) {
  const uint32_t coupled = rule == DraftRule::Coupled && !exact_successor ? row.resolved : row.fresh;
  if (rule == DraftRule::Fresh || opt.alpha >= 1.0) return coupled;
  // A coin of its own per (position, step): independent of the draft, the verification and both
  // candidate next drafts, which is what keeps the mixture an exact sample of p.
  const bool take_coupled = philox::uniform(seed, static_cast<uint32_t>(n),
                                            philox::purpose_word(philox::Purpose::Couple, round), 0) < opt.alpha;
  return take_coupled ? coupled : row.independent;
}

uint32_t WindowStrategy::token_at(int64_t n) const {
  return n < committed_ ? static_cast<uint32_t>(grid_[static_cast<size_t>(n)]) : drafts_[static_cast<size_t>(n)];
}

void WindowStrategy::initialise(int64_t end) {
  CommandStream& s = stream();
  const int64_t V = vocab(), W = models_.target->config().grid_size;
  std::vector<std::pair<int64_t, uint32_t>> point_mass;
  std::vector<CopyRegion> proposals;
  for (int64_t n = ready_; n < end; ++n) {
    if (heads_ && heads_->take(0, n, q_.view().rows(n, 1), proposals, drafts_[static_cast<size_t>(n)])) {
      rounds_[static_cast<size_t>(n)] = 0;
      continue;
    }
    const InitialDraft d = initial_draft(opt_.init, in_.seed, n, V, W, [this](int64_t m) { return token_at(m); });
    if (d.uniform)
      s.fill(q_.view().rows(n, 1), det::float_bits(1.0f / static_cast<float>(V)));
    else
      point_mass.push_back({n, d.token});
    drafts_[static_cast<size_t>(n)] = d.token;
  }
  record_point_masses(s, q_, point_mass);
  s.copy(proposals);
  ready_ = std::max(ready_, end);
}

void WindowStrategy::decode(StepEvent& e) {
  const int64_t c = committed_, D = drafts_at(c), Q = queries_for(c, D);
  const uint32_t round = static_cast<uint32_t>(step_);
  initialise(c + D);
  std::vector<CopyRegion> redrafts;
  for (int64_t n : redraft_) {
    if (n >= c && n < ready_ && heads_->take(0, n, q_.view().rows(n, 1), redrafts, drafts_[static_cast<size_t>(n)]))
      rounds_[static_cast<size_t>(n)] = 0;
  }
  stream().copy(redrafts);
  redraft_.clear();
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
  const bool exact_successor =
      rule_ == DraftRule::Coupled && !accept_rule().descriptor().lossless && !faults_.relaxed_successor;
  if (exact_successor) record_exact_successor(p, q_rows, row_drafts_.view().rows(0, Q), c, Q, round);
  const bool partial = rule_ != DraftRule::Fresh && opt_.alpha < 1.0;
  if (partial) record_independent_draft(p, c, Q, round);
  if (!(faults_.stale_q && round % 2 == 1))
    stream().copy(faults_.q_unfiltered ? unfiltered_p(Q) : p, q_rows);  // next step's q is this step's p
  if (heads_ && heads_->record(target(), last_hidden(), {head_step(c, Q, round)}, in_.sampler)[0]) ++head_forwards_;
  const Outcome o = finish(Q);
  if (heads_) heads_->read();

  const int64_t j = commit(e, c, Q, window, o);
  for (int64_t t = j + 1; t < Q; ++t) {
    const size_t r = static_cast<size_t>(t);
    drafts_[static_cast<size_t>(c + t)] =
        next_window_draft(opt_, rule_, exact_successor, in_.seed, c + t, round,
                          {o.resolved[r], o.fresh[r], partial ? o.independent[r] : 0});
    if (opt_.init == DraftInit::Heads && opt_.redraft_after > 0 &&
        ++rounds_[static_cast<size_t>(c + t)] >= opt_.redraft_after)
      redraft_.push_back(c + t);
  }
  ready_ = c + Q;
}

HeadStep WindowStrategy::head_step(int64_t c, int64_t q, uint32_t round) const {
  HeadStep h;
  h.c = c;
  h.q = q;
  // The forward's batch rows (the conditional row, then with CFG the null row), q rows each.
  for (int64_t b = 0; b < last_hidden().shape[0] / q; ++b) h.hidden_base.push_back(b * q);
  h.seed = in_.seed;
  h.round = round;
  if (opt_.redraft_after == 0) return h;
  // Inside the window, redrafting reads a proposal at the next step, where this step takes the
  // position to redraft_after rounds; a position still undecided after the next step got a newer
  // proposal there from the row before it (an offset-1 head, which no head replaces; none
  // proposes the first position of an image row). So for the other positions inside the window
  // this step's proposal would never be read.
  bool next_to_left = false;
  for (const DraftHead& d : models_.heads->heads()) next_to_left = next_to_left || (!d.vertical && d.offset == 1);
  const int64_t W = models_.target->config().grid_size;
  h.readable_inside = [this, next_to_left, W](int64_t m) {
    return rounds_[static_cast<size_t>(m)] + 1 >= opt_.redraft_after || !next_to_left || m % W == 0;
  };
  return h;
}

}  // namespace vkspec
