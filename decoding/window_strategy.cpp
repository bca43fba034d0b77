#include "decoding/window_strategy.h"

#include "decoding/point_mass.h"
#include "decoding/window_batch_strategy.h"
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

StrategyDescriptor window_method_descriptor(const std::string& name, int order, DraftRule rule, std::string summary,
                                            std::string reference) {
  StrategyDescriptor d;
  d.name = name;
  d.order = order;
  d.summary = std::move(summary);
  d.reference = std::move(reference);
  d.options = window_option_specs();
  if (rule != DraftRule::Fresh) d.options.push_back(coupling_strength_spec());
  d.accept_rules = AcceptRuleSlot{};
  d.lossless = [](const OptionValues&) { return true; };  // when the rule is
  d.needs = window_needs;
  d.max_queries = [](const OptionValues& o, const GptConfig&) { return window_max_queries(o); };
  // With --init heads the heads also run on some rows: no fixed cost per forward.
  d.fixed_queries = [](const OptionValues& o) { return o.choice("init") == "heads" ? 0 : window_max_queries(o); };
  d.jacobi_window = [](const OptionValues& o) { return o.integer("window"); };
  d.make = [name, rule](const ModelSet& m, const StrategyInputs& in,
                        const OptionValues& o) -> std::unique_ptr<Strategy> {
    return std::make_unique<WindowStrategy>(name, m, in, rule, parse_window_options(o));
  };
  d.make_batch = [name, rule](const ModelSet& m, const std::vector<StrategyInputs>& in, const OptionValues& o,
                              int64_t lanes) -> std::unique_ptr<BatchStrategy> {
    return std::make_unique<WindowBatchStrategy>(name, m, in, rule, parse_window_options(o), lanes);
  };
  d.continuous_batching = true;
  return d;
}

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
    if (!models.heads)
      throw Error(name() + ": --init heads needs draft heads (--heads FILE, tools/train_draft_heads.py)");
    const int64_t max_q = max_drafts() + 1;
    proposal_tok_.assign(grid_.size(), -1);
    rounds_.assign(grid_.size(), 0);
    proposal_q_ = ctx.tensor(DType::F32, {image_tokens(), vocab()}, name() + " head proposals");
    for (const DraftHead& h : models.heads->heads()) {
      head_q_.push_back(ctx.tensor(DType::F32, {max_q, vocab()}, name() + " head " + h.name));
      head_tok_.push_back(ctx.tensor(DType::U32, {max_q}, name() + " head tokens " + h.name, MemoryUsage::Readback));
    }
    head_pos_ = ctx.tensor(DType::U32, {static_cast<int64_t>(head_q_.size()), max_q}, name() + " head positions",
                           MemoryUsage::Upload);
  }
  q_ = ctx.tensor(DType::F32, {image_tokens(), vocab()}, name() + " draft distributions");
  row_drafts_ = ctx.tensor(DType::U32, {max_drafts() + 1}, name() + " row drafts", MemoryUsage::Upload);
}

InitialDraft initial_draft(DraftInit how, uint64_t seed, int64_t n, int64_t vocab, int64_t grid_size,
                           const std::function<uint32_t(int64_t)>& token_at) {
  if (how == DraftInit::Above && n < grid_size) how = DraftInit::Left;  // the first row has nothing above
  if (how == DraftInit::Left && n == 0) how = DraftInit::Random;
  if (how != DraftInit::Random) return {token_at(how == DraftInit::Left ? n - 1 : n - grid_size), false};
  // (bits * V) >> 32 is uniform to within V / 2^32, far below anything a test could see.
  const uint32_t bits =
      philox::bits(seed, static_cast<uint32_t>(n), philox::purpose_word(philox::Purpose::DraftInit), 0);
  return {static_cast<uint32_t>((static_cast<uint64_t>(bits) * static_cast<uint64_t>(vocab)) >> 32), true};
}

uint32_t next_window_draft(const WindowOptions& opt, DraftRule rule, bool exact_successor, uint64_t seed, int64_t n,
                           uint32_t round, uint32_t resolved, uint32_t fresh, uint32_t independent) {
  const uint32_t coupled = rule == DraftRule::Coupled && !exact_successor ? resolved : fresh;
  if (rule == DraftRule::Fresh || opt.alpha >= 1.0) return coupled;
  // A coin of its own per (position, step): independent of the draft, the verification and both
  // candidate next drafts, which is what keeps the mixture an exact sample of p.
  const bool take_coupled = philox::uniform(seed, static_cast<uint32_t>(n),
                                            philox::purpose_word(philox::Purpose::Couple, round), 0) < opt.alpha;
  return take_coupled ? coupled : independent;
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
    DraftInit how = opt_.init;
    if (how == DraftInit::Heads) {
      if (proposal_tok_[static_cast<size_t>(n)] >= 0) {
        drafts_[static_cast<size_t>(n)] = static_cast<uint32_t>(proposal_tok_[static_cast<size_t>(n)]);
        proposals.push_back({proposal_q_.view().rows(n, 1), q_.view().rows(n, 1)});
        rounds_[static_cast<size_t>(n)] = 0;
        continue;
      }
      how = DraftInit::Above;
    }
    const InitialDraft d = initial_draft(how, in_.seed, n, V, W, [this](int64_t m) { return token_at(m); });
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
    if (n < c || n >= ready_ || proposal_tok_[static_cast<size_t>(n)] < 0) continue;
    drafts_[static_cast<size_t>(n)] = static_cast<uint32_t>(proposal_tok_[static_cast<size_t>(n)]);
    redrafts.push_back({proposal_q_.view().rows(n, 1), q_.view().rows(n, 1)});
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
  stream().copy(faults_.q_unfiltered ? unfiltered_p(Q) : p, q_rows);  // next step's q is this step's p
  const HeadPicks picks = opt_.init == DraftInit::Heads ? record_head_proposals(c, Q, round) : HeadPicks{};
  const Outcome o = finish(Q);
  read_head_proposals(picks);

  const int64_t j = commit(e, c, Q, window, o);
  for (int64_t t = j + 1; t < Q; ++t) {
    const size_t r = static_cast<size_t>(t);
    drafts_[static_cast<size_t>(c + t)] = next_window_draft(opt_, rule_, exact_successor, in_.seed, c + t, round,
                                                            o.resolved[r], o.fresh[r], partial ? o.independent[r] : 0);
    if (opt_.init == DraftInit::Heads && opt_.redraft_after > 0 &&
        ++rounds_[static_cast<size_t>(c + t)] >= opt_.redraft_after)
      redraft_.push_back(c + t);
  }
  ready_ = c + Q;
}

WindowStrategy::HeadPicks WindowStrategy::record_head_proposals(int64_t c, int64_t q, uint32_t round) {
  DraftHeads& heads = *models_.heads;
  CommandStream& s = stream();
  const int64_t N = image_tokens(), W = models_.target->config().grid_size, max_q = head_pos_.shape()[1];
  const int64_t H = static_cast<int64_t>(heads.heads().size());
  // Only proposals that can be read before a newer one replaces them: the heads' rows are most of
  // a step's cost. initialise() reads those past this step's window. Inside it, redrafting reads
  // one at the next step, where this step takes the position to redraft_after rounds; a position
  // still undecided after the next step got a newer proposal there from the row before it (an
  // offset-1 head, which no head replaces; none proposes the first position of an image row). So
  // for the other positions inside the window this step's proposal would never be read.
  bool next_to_left = false;
  for (const DraftHead& h : heads.heads()) next_to_left = next_to_left || (!h.vertical && h.offset == 1);
  auto readable = [&](int64_t m) {
    if (m >= c + q) return true;
    if (opt_.redraft_after == 0) return false;
    return rounds_[static_cast<size_t>(m)] + 1 >= opt_.redraft_after || !next_to_left || m % W == 0;
  };
  HeadPicks picks;
  picks.at.assign(static_cast<size_t>(N), {-1, 0});
  picks.rows.assign(static_cast<size_t>(H), 0);
  std::vector<int64_t> best(static_cast<size_t>(N), N + 1);
  for (int64_t k = 0; k < H; ++k) {
    const DraftHead& h = heads.heads()[static_cast<size_t>(k)];
    for (int64_t t = 0; t < q; ++t) {
      const int64_t from = c + t, m = from + h.offset;  // row t predicted `from`
      if (m >= N || (!h.vertical && from % W + h.offset >= W) || !readable(m)) continue;
      if (h.offset < best[static_cast<size_t>(m)]) {
        best[static_cast<size_t>(m)] = h.offset;
        picks.at[static_cast<size_t>(m)] = {static_cast<int>(k), t};
      }
    }
  }
  // Each head runs on its picked rows only, in order: row i of its output is the i-th of them.
  // The sampler's random numbers are keyed by position, so a row's proposal does not depend on
  // which other rows run with it.
  const TensorView hidden = last_hidden();
  const int64_t B = hidden.shape[0] / q;  // batch rows: the conditional rows, then (CFG) the unconditional
  std::vector<uint32_t> pos(static_cast<size_t>(H * max_q), 0u);
  std::vector<std::pair<int, int64_t>> hidden_rows;  // (head, hidden row) in the order of the logits
  std::vector<CopyRegion> spread;
  for (int64_t k = 0; k < H; ++k) {
    const int64_t offset = heads.heads()[static_cast<size_t>(k)].offset;
    std::vector<int64_t> rows;  // the window rows head k runs on
    for (int64_t t = 0; t < q; ++t) {
      const int64_t m = c + t + offset;
      if (m >= N || picks.at[static_cast<size_t>(m)] != std::pair<int, int64_t>{static_cast<int>(k), t}) continue;
      const int64_t i = static_cast<int64_t>(rows.size());
      picks.at[static_cast<size_t>(m)].second = i;
      pos[static_cast<size_t>(k * max_q + i)] = static_cast<uint32_t>(m);
      spread.push_back({head_q_[static_cast<size_t>(k)].view().rows(i, 1), proposal_q_.view().rows(m, 1)});
      rows.push_back(t);
    }
    picks.rows[static_cast<size_t>(k)] = static_cast<int64_t>(rows.size());
    // Head k's block of logits as the sampler reads it: its n conditional rows, then (CFG) the n
    // unconditional ones.
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t : rows) hidden_rows.push_back({static_cast<int>(k), b * q + t});
  }
  if (hidden_rows.empty()) return picks;
  models_.ctx->upload(head_pos_, 0, pos.data(), pos.size() * 4);
  target().set_stage(stage::kHeads);
  const TensorView logits = heads.logits_at(s, hidden, hidden_rows);
  target().set_stage(stage::kSampling);
  ++head_forwards_;
  int64_t first_row = 0;
  for (int64_t k = 0; k < H; ++k) {
    const int64_t n = picks.rows[static_cast<size_t>(k)];
    if (n == 0) continue;
    const ops::SamplerParams sp =
        in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::Categorical,
                              philox::purpose_word(philox::Purpose::DraftHead, round * 8u + static_cast<uint32_t>(k)));
    ops::sampler(s, logits.rows(first_row, B * n), head_pos_.view().reshape({H * max_q}).rows(k * max_q, n), sp,
                 head_q_[static_cast<size_t>(k)].view().rows(0, n),
                 head_tok_[static_cast<size_t>(k)].view().rows(0, n));
    first_row += B * n;
  }
  s.copy(spread);
  return picks;
}

void WindowStrategy::read_head_proposals(const HeadPicks& picks) {
  std::vector<std::vector<uint32_t>> tokens(picks.rows.size());
  for (size_t k = 0; k < picks.rows.size(); ++k) {
    tokens[k].resize(static_cast<size_t>(picks.rows[k]));
    models_.ctx->download(head_tok_[k], 0, tokens[k].data(), tokens[k].size() * 4);
  }
  for (size_t m = 0; m < picks.at.size(); ++m)
    if (picks.at[m].first >= 0)
      proposal_tok_[m] =
          static_cast<int32_t>(tokens[static_cast<size_t>(picks.at[m].first)][static_cast<size_t>(picks.at[m].second)]);
}

}  // namespace vkspec
