#include "decoding/pjd_strategy.h"

#include <algorithm>
#include <numeric>

#include "common/error.h"
#include "decoding/point_mass.h"
#include "decoding/zipar_rows.h"
#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

// Rows of the step's u32 read-back: the sampler's token, acceptance, resolved token, fresh token.
constexpr int64_t kOutRows = 4;

}  // namespace

PjdOptions parse_pjd_options(const OptionValues& o, int64_t W) {
  PjdOptions p;
  p.window = o.integer("window");
  // The code's long_size (9) counts a row's leading token (Lumina-mGPT's end-of-line of the row
  // above) besides its image tokens; a lag past the grid width means one row at a time.
  p.lag = std::min(o.integer("lag"), W);
  p.lead = std::min(o.integer("lead"), W);
  p.mask = o.choice("mask") == "full" ? PjdMask::Full : PjdMask::RowCausal;
  p.lower_rows = o.choice("lower-rows") == "resolve" ? PjdLowerRows::Resolve : PjdLowerRows::Prefix;
  p.init = o.choice("init") == "above" ? PjdInit::Above : PjdInit::Random;
  p.accept = parse_accept_choice(o);
  return p;
}

// At most W + 1 queries: the windows predict disjoint column ranges of one W-wide staircase (the
// top row's within [c_top, W), each other row's within [c[r], c[r - 1])), plus one repair.
PjdStrategy::PjdStrategy(const ModelSet& models, const StrategyInputs& in, const PjdOptions& opt)
    : Strategy("pjd", models, in, models.target->config().grid_size + 1),
      opt_(opt),
      W_(models.target->config().grid_size),
      schedule_(W_, opt.window, opt.lag, opt.lead),
      accept_(bind_accept_rule(opt.accept, models, "pjd", W_ + 1)) {
  const GptConfig& cfg = models.target->config();
  const int64_t max_q = W_ + 1, V = vocab(), N = image_tokens();
  pending_.assign(static_cast<size_t>(N), -1);
  fresh_from_.assign(static_cast<size_t>(N), -1);
  placeholder_.assign(static_cast<size_t>(W_), false);
  slot_valid_.assign(static_cast<size_t>(target().cache().slots()), false);
  std::fill(slot_valid_.begin(), slot_valid_.begin() + (cfg.cls_token_num - 1), true);  // prefilled (TargetSession)
  Context& ctx = *models.ctx;
  positions_ = ctx.tensor(DType::U32, {max_q}, "pjd positions", MemoryUsage::Upload);
  drafts_ = ctx.tensor(DType::U32, {max_q}, "pjd drafts", MemoryUsage::Upload);
  q_ = ctx.tensor(DType::F32, {N, V}, "pjd draft distributions");
  q_rows_ = ctx.tensor(DType::F32, {max_q, V}, "pjd step draft distributions");
  probs_ = ctx.tensor(DType::F32, {max_q, V}, "pjd target probabilities");
  identity_ = ctx.tensor(DType::U32, {V, 1}, "pjd identity table");
  std::vector<uint32_t> iota(static_cast<size_t>(V));
  std::iota(iota.begin(), iota.end(), 0u);
  ctx.upload(identity_, iota.data(), iota.size() * 4);
  out_ = ctx.tensor(DType::U32, {kOutRows, max_q}, "pjd step results", MemoryUsage::Readback);
  probs_x_ = ctx.tensor(DType::F32, {2, max_q}, "pjd draft probabilities", MemoryUsage::Readback);
}

PjdStrategy::Query PjdStrategy::anchor_query(const PjdWindow& w, int64_t index) {
  const int64_t n0 = w.row * W_ + w.first;
  Query q;
  q.slot = target().config().cls_token_num + n0 - 1;
  q.window = index;
  q.predicts = n0;
  if (n0 == 0) return q;  // the condition query
  const size_t r = static_cast<size_t>(w.row);
  if (w.first > 0 || schedule_.complete(w.row - 1)) {
    q.fed = static_cast<uint32_t>(grid_[static_cast<size_t>(n0 - 1)]);
    if (w.first == 0) placeholder_[r] = false;  // the real token replaces the placeholder here
    return q;
  }
  q.fed = row_start_token(grid_, W_, w.row, schedule_.committed(w.row - 1));
  q.feed = PjdFeed::Placeholder;
  placeholder_[r] = true;
  return q;
}

uint32_t PjdStrategy::draft_for(int64_t n, std::vector<std::pair<int64_t, uint32_t>>& point_masses) {
  const size_t m = static_cast<size_t>(n);
  if (pending_[m] >= 0) return static_cast<uint32_t>(pending_[m]);
  uint32_t tok = 0;
  if (opt_.init == PjdInit::Above && n >= W_) {
    // A window's drafts lie below committed tokens (the row above is complete for the top row, at
    // least lead columns ahead for the others), so the token above is known.
    tok = static_cast<uint32_t>(checked_token(static_cast<uint32_t>(grid_[m - static_cast<size_t>(W_)]), n - W_));
  } else {
    // A uniform image token, (bits * V) >> 32 as WindowStrategy's random init; a position can
    // enter a window again after a shrunken window dropped its draft, hence the step as round.
    const uint32_t bits =
        philox::bits(in_.seed, static_cast<uint32_t>(n),
                     philox::purpose_word(philox::Purpose::DraftInit, static_cast<uint32_t>(step_)), 0);
    tok = static_cast<uint32_t>((static_cast<uint64_t>(bits) * static_cast<uint64_t>(vocab())) >> 32);
  }
  pending_[m] = tok;
  fresh_from_[m] = -1;
  point_masses.push_back({n, tok});
  return tok;
}

std::vector<PjdStrategy::Query> PjdStrategy::plan(const std::vector<PjdWindow>& windows) {
  const int64_t cls = target().config().cls_token_num;
  std::vector<bool> has_window(static_cast<size_t>(W_), false);
  std::vector<Query> queries;
  std::vector<std::pair<int64_t, uint32_t>> point_masses;
  for (size_t w = 0; w < windows.size(); ++w) {
    const PjdWindow& win = windows[w];
    has_window[static_cast<size_t>(win.row)] = true;
    const int64_t n0 = win.row * W_ + win.first;
    // A row keeps at most window - 1 drafts; its last query's position gets a new one.
    for (int64_t m = n0 + win.queries - 1; m < (win.row + 1) * W_; ++m) pending_[static_cast<size_t>(m)] = -1;
    queries.push_back(anchor_query(win, static_cast<int64_t>(w)));
    for (int64_t t = 1; t < win.queries; ++t) {
      const int64_t m = n0 + t - 1;
      Query q;
      q.slot = cls + m;
      q.fed = draft_for(m, point_masses);
      q.window = static_cast<int64_t>(w);
      q.predicts = m + 1;
      q.feed = PjdFeed::Draft;
      queries.back().draft = q.fed;  // the query before predicts m
      queries.push_back(q);
    }
  }
  // A waiting row (no room below the row above) keeps no draft (the code's count goes negative there).
  for (int64_t r = 0; r < W_; ++r)
    if (!has_window[static_cast<size_t>(r)])
      for (int64_t m = r * W_ + schedule_.committed(r); m < (r + 1) * W_; ++m) pending_[static_cast<size_t>(m)] = -1;
  for (int64_t r = 1; r < W_; ++r)
    if (placeholder_[static_cast<size_t>(r)] && schedule_.complete(r - 1)) {
      Query q;
      q.slot = cls + r * W_ - 1;
      q.fed = static_cast<uint32_t>(grid_[static_cast<size_t>(r * W_ - 1)]);
      queries.push_back(q);
      placeholder_[static_cast<size_t>(r)] = false;
    }
  record_point_masses(target().stream(), q_, point_masses);
  return queries;
}

PjdStrategy::Outcome PjdStrategy::run(const std::vector<Query>& queries, const PjdVisibility& vis) {
  using philox::Purpose;
  TargetSession& t = target();
  CommandStream& s = t.stream();
  const int64_t T = static_cast<int64_t>(queries.size()), max_q = W_ + 1;
  const uint32_t round = static_cast<uint32_t>(step_);
  // Drafts the last step drew fresh take that step's p as their q; probs_ still holds it.
  std::vector<CopyRegion> fresh_q, gather;
  for (size_t n = 0; n < fresh_from_.size(); ++n) {
    if (fresh_from_[n] >= 0 && pending_[n] >= 0)
      fresh_q.push_back({probs_.view().rows(fresh_from_[n], 1), q_.view().rows(static_cast<int64_t>(n), 1)});
    fresh_from_[n] = -1;
  }
  s.copy(fresh_q);
  std::vector<int64_t> slots;
  std::vector<uint32_t> fed, pos, drafts;
  for (int64_t i = 0; i < T; ++i) {
    const Query& q = queries[static_cast<size_t>(i)];
    slots.push_back(q.slot);
    if (q.slot >= t.config().cls_token_num) fed.push_back(q.fed);
    pos.push_back(static_cast<uint32_t>(std::max<int64_t>(q.predicts, 0)));
    drafts.push_back(q.draft);
    if (q.draft != ops::kNoToken)
      gather.push_back({q_.view().rows(q.predicts, 1), q_rows_.view().rows(i, 1)});
    else
      s.fill(q_rows_.view().rows(i, 1), 0u);
  }
  s.copy(gather);
  t.ctx().upload(positions_, 0, pos.data(), pos.size() * 4);
  t.ctx().upload(drafts_, 0, drafts.data(), drafts.size() * 4);
  const GptBatch& batch = t.at_positions(slots, fed, [&](int64_t i, int64_t slot) { return vis.sees(i, slot); });

  const GptOutputs fwd = t.forward(batch);
  const TensorView p = probs_.view().rows(0, T), q = q_rows_.view().rows(0, T), position = positions_.view().rows(0, T),
                   draft = drafts_.view().rows(0, T), flat = out_.view().reshape({kOutRows * max_q}),
                   x = probs_x_.view().reshape({2 * max_q});
  auto out_row = [&](int64_t r) { return flat.rows(r * max_q, T); };
  ops::sampler(s, fwd.logits, position,
               in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::Categorical,
                                     philox::purpose_word(Purpose::Sample)),
               p, out_row(0));
  accept_->record_resolution(s, JudgedRows{p, q, draft, position, in_.seed, round, {}}, out_row(1), out_row(2));
  // norm(max(p - p, 0)) is all zero, so this draws from p itself (speculative_base.h's independent draft).
  ops::spec_residual_sample(s, p, p, position, {in_.seed, philox::purpose_word(Purpose::Draft, round)}, out_row(3));
  ops::pooled_prob(s, p, draft, identity_.view(), 1, x.rows(0, T));
  ops::pooled_prob(s, q, draft, identity_.view(), 1, x.rows(max_q, T));
  t.submit_and_wait();

  std::vector<uint32_t> all(static_cast<size_t>(kOutRows * max_q));
  t.ctx().download(out_, all.data(), all.size() * 4);
  std::vector<float> px(static_cast<size_t>(2 * max_q));
  t.ctx().download(probs_x_, px.data(), px.size() * 4);
  auto row = [&](int64_t r) { return std::vector<uint32_t>(all.begin() + r * max_q, all.begin() + r * max_q + T); };
  Outcome o{row(0), row(1), row(2), row(3), {}, {}};
  o.p_x.assign(px.begin(), px.begin() + T);
  o.q_x.assign(px.begin() + max_q, px.begin() + max_q + T);
  return o;
}

void PjdStrategy::set_fresh_draft(int64_t n, uint32_t token, int64_t query_row) {
  pending_[static_cast<size_t>(n)] = checked_token(token, n);
  fresh_from_[static_cast<size_t>(n)] = query_row;
}

void PjdStrategy::resolve(const PjdWindow& w, int64_t first, const std::vector<Query>& queries, const Outcome& o,
                          StepEvent& e) {
  const int64_t cls = target().config().cls_token_num, n0 = w.row * W_ + w.first, v = w.queries;
  auto at = [&](int64_t t) { return static_cast<size_t>(first + t); };
  // The paper resolves the top row only; --lower-rows resolve every row (ours).
  const bool resolves = w.top || opt_.lower_rows == PjdLowerRows::Resolve;
  int64_t j = 0;  // drafts accepted before the first rejection
  while (j < v - 1 && o.accept[at(j)]) ++j;
  for (int64_t t = 0; t < v; ++t) {
    e.proposed.push_back(static_cast<int32_t>(n0 + t));
    const uint32_t tok = t < v - 1 ? queries[at(t)].draft : (resolves ? o.sample : o.fresh)[at(t)];
    e.proposed_tokens.push_back(static_cast<int32_t>(tok));
  }
  for (int64_t t = 0; t < j; ++t) {
    grid_[static_cast<size_t>(n0 + t)] = checked_token(queries[at(t)].draft, n0 + t);
    slot_valid_[static_cast<size_t>(cls + n0 + t)] = true;  // fed as the committed token itself
    e.accepted.push_back(static_cast<int32_t>(n0 + t));
  }
  int64_t commits = j;
  if (resolves) {
    const int32_t n = static_cast<int32_t>(n0 + j);
    const bool rejected = j < v - 1;
    grid_[static_cast<size_t>(n)] = checked_token(rejected ? o.resolved[at(j)] : o.sample[at(j)], n);
    (rejected ? e.resampled : e.accepted).push_back(n);
    if (rejected) e.rejected.push_back(n);
    ++commits;
  } else if (j < v - 1) {
    e.rejected.push_back(static_cast<int32_t>(n0 + j));
  }
  for (int64_t t = 0; t < commits; ++t) pending_[static_cast<size_t>(n0 + t)] = -1;
  // After the first rejection: a draft with p(x) > 0.5 q(x) stays with its q; every other
  // position (the rejected one of a lower row, the last query's) takes this step's fresh sample.
  for (int64_t t = commits; t < v; ++t) {
    const bool keep = t > j && t < v - 1 && o.p_x[at(t)] > 0.5f * o.q_x[at(t)];
    if (!keep) set_fresh_draft(n0 + t, o.fresh[at(t)], first + t);
  }
  schedule_.commit(w.row, commits);
  committed_ += commits;
}

void PjdStrategy::decode(StepEvent& e) {
  const std::vector<PjdWindow> windows = schedule_.windows();
  const std::vector<Query> queries = plan(windows);
  PjdVisibility vis(opt_.mask, slot_valid_);
  for (const Query& q : queries) vis.add(q.slot, q.window, q.feed);
  const Outcome o = run(queries, vis);
  slot_valid_ = vis.valid();  // then resolve() validates the accepted drafts' slots
  int64_t first = 0;
  for (size_t w = 0; w < windows.size(); ++w) {
    resolve(windows[w], first, queries, o, e);
    first += windows[w].queries;
    // The viewer outlines each active row's window (StepEvent::groups).
    std::vector<int32_t> group;
    for (int64_t t = 0; t < windows[w].queries; ++t)
      group.push_back(static_cast<int32_t>(windows[w].row * W_ + windows[w].first + t));
    e.groups.push_back(std::move(group));
  }
  schedule_.activate_rows();
  ++nfe_;
}

namespace {

StrategyDescriptor pjd() {
  StrategyDescriptor d;
  d.name = "pjd";
  d.order = 65;
  d.summary = "Parallel Jacobi Decoding: several rows, each with its own Jacobi window, refined in one forward";
  d.reference =
      "Liao, Li, Jian, Wang, CVPR 2026, Parallel Jacobi Decoding for Fast Autoregressive Image Generation; --lead, "
      "--lower-rows resolve, --init above and a relaxed --accept are ours (docs/methods.md)";
  d.options = {
      OptionSpec::integer("window", 8, 1, 1024,
                          "queries per active row: its last committed token and window - 1 drafts (at most the "
                          "tokens left in the row; below the top row, at most the lead of the row above)"),
      OptionSpec::integer("lag", 8, 1, 1 << 20,
                          "tokens a row has committed when the row below starts (clamped to the grid width: one "
                          "row at a time)"),
      OptionSpec::choice("mask", "row-causal", {"row-causal", "full"},
                         "what a window sees: committed tokens and its own drafts (row-causal), or also the "
                         "pending drafts of the rows above (full, the paper's ablation)"),
      OptionSpec::integer("lead", 1, 1, 1 << 20,
                          "a row below the top predicts column c once the row above has c + lead tokens (1: the "
                          "paper; ZipAR's window; clamped to the grid width)"),
      OptionSpec::choice("lower-rows", "prefix", {"prefix", "resolve"},
                         "what a row below the top commits: its accepted drafts (prefix, the paper), or also the "
                         "correction at its first rejection or the bonus, as the top row (resolve, ours)"),
      OptionSpec::choice("init", "random", {"random", "above"},
                         "a position's first draft: a uniform token (random, the paper) or the committed token "
                         "above it (above, ours; the first row stays random)")};
  d.accept_rules = AcceptRuleSlot{};
  d.lossless = [](const OptionValues&) { return false; };
  d.max_queries = [](const OptionValues&, const GptConfig& t) { return t.grid_size + 1; };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    if (!m.target) throw Error("a strategy needs a context and a target model");
    return std::make_unique<PjdStrategy>(m, in, parse_pjd_options(o, m.target->config().grid_size));
  };
  return d;
}

const RegisterStrategy kPjd(pjd());

}  // namespace
}  // namespace vkspec
