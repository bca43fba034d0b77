#include "decoding/hawk_strategy.h"

#include <algorithm>
#include <numeric>

#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"
#include "common/error.h"

namespace vkspec {
namespace {

constexpr int kMaxDepth = 4, kMaxAlternates = 8;

DraftHeads& checked_heads(const ModelSet& m) {
  if (!m.heads) throw Error("hawk: needs draft heads (--heads FILE, trained on the target by tools/train_draft_heads.py)");
  return *m.heads;
}

}  // namespace

int64_t hawk_max_queries() { return 1 + 3 * kMaxDepth + 1; }

HawkStrategy::HawkStrategy(const ModelSet& models, const StrategyInputs& in, int64_t depth)
    : Strategy("hawk", models, in, hawk_max_queries(), kMaxAlternates),
      W_(models.target->config().grid_size),
      cls_(models.target->config().cls_token_num),
      depth_(depth),
      heads_(checked_heads(models)) {
  for (int j = 1; j <= depth_; ++j) horizontal_.push_back(heads_.index("h" + std::to_string(j)));
  vertical_ = {heads_.index("v1"), heads_.index("v2")};
  for (int v = 0; v < 2; ++v)
    if (vertical_[v] >= 0 && heads_.heads()[static_cast<size_t>(vertical_[v])].offset != (v + 1) * W_)
      throw Error("hawk: head v" + std::to_string(v + 1) + " of " + heads_.path() + " does not predict " +
                  std::to_string(v + 1) + " rows below");
  for (int j = 0; j < depth_; ++j)
    if (horizontal_[static_cast<size_t>(j)] >= 0 &&
        heads_.heads()[static_cast<size_t>(horizontal_[static_cast<size_t>(j)])].offset != j + 1)
      throw Error("hawk: head h" + std::to_string(j + 1) + " of " + heads_.path() + " has the wrong offset");
  const int64_t max_q = hawk_max_queries(), V = vocab(), N = image_tokens(), rows = target().rows();
  Context& ctx = *models.ctx;
  const int64_t H = static_cast<int64_t>(heads_.heads().size()), dim = models.target->config().dim;
  vcached_.assign(static_cast<size_t>(N), {false, false});
  probs_ = ctx.tensor(DType::F32, {max_q, V}, "hawk target probabilities");
  q_tree_ = ctx.tensor(DType::F32, {max_q, V}, "hawk candidate distributions");
  residuals_ = ctx.tensor(DType::F32, {max_q, V}, "hawk residual distributions");
  zeros_ = ctx.tensor(DType::F32, {1, V}, "hawk zero distribution");
  vcache_q_ = ctx.tensor(DType::F32, {2 * N, V}, "hawk speculation cache");
  positions_ = ctx.tensor(DType::U32, {N + 1}, "hawk positions");
  std::vector<uint32_t> iota(static_cast<size_t>(N + 1));
  std::iota(iota.begin(), iota.end(), 0u);
  ctx.upload(positions_, iota.data(), iota.size() * 4);
  tokens_ = ctx.tensor(DType::U32, {max_q}, "hawk candidate tokens", MemoryUsage::Readback);
  accept_ = ctx.tensor(DType::U32, {max_q}, "hawk acceptances", MemoryUsage::Readback);
  final_ = ctx.tensor(DType::U32, {max_q}, "hawk next tokens", MemoryUsage::Readback);
  vcache_tok_ = ctx.tensor(DType::U32, {2 * N}, "hawk speculation cache tokens");
  hidden_ = ctx.tensor(DType::F32, {rows * max_q, dim}, "hawk hidden states");
  head_in_ = ctx.tensor(DType::F32, {rows, dim}, "hawk head inputs");
  head_pos_ = ctx.tensor(DType::U32, {H}, "hawk head positions", MemoryUsage::Upload);
  head_q_ = ctx.tensor(DType::F32, {H, V}, "hawk head distributions");
  head_tok_ = ctx.tensor(DType::U32, {H}, "hawk head tokens");
  target().stream().fill(zeros_.view(), 0u);  // runs with the first step
}

void HawkStrategy::record_heads() {
  CommandStream& s = target().stream();
  const int64_t N = image_tokens(), V = vocab(), rows = target().rows();
  const int64_t H = static_cast<int64_t>(heads_.heads().size());
  // Row head_row_ of each batch row of the previous forward, [rows, dim] as the sampler reads it.
  std::vector<CopyRegion> inputs;
  for (int64_t b = 0; b < rows; ++b)
    inputs.push_back({hidden_.view().rows(b * head_queries_ + head_row_, 1), head_in_.view().rows(b, 1)});
  s.copy(inputs);
  std::vector<uint32_t> pos(static_cast<size_t>(H));
  for (int64_t k = 0; k < H; ++k)
    pos[static_cast<size_t>(k)] = static_cast<uint32_t>(std::min(head_from_ + heads_.heads()[static_cast<size_t>(k)].offset, N));
  models_.ctx->upload(head_pos_, pos.data(), pos.size() * 4);
  std::vector<std::pair<int, int64_t>> picks;  // every head on the row, block k = [cond, uncond]
  for (int64_t k = 0; k < H; ++k)
    for (int64_t b = 0; b < rows; ++b) picks.push_back({static_cast<int>(k), b});
  target().set_stage(stage::kHeads);
  const TensorView logits = heads_.logits_at(s, head_in_.view(), picks);
  target().set_stage(stage::kSampling);
  ++head_forwards_;
  for (int64_t k = 0; k < H; ++k) {
    const ops::SamplerParams sp = in_.sampler.op_params(
        V, in_.seed, ops::SampleMode::Categorical,
        philox::purpose_word(philox::Purpose::DraftHead, head_round_ * 8u + static_cast<uint32_t>(k)));
    ops::sampler(s, logits.rows(k * rows, rows), head_pos_.view().rows(k, 1), sp, head_q_.view().rows(k, 1),
                 head_tok_.view().rows(k, 1));
  }
  // The vertical proposals wait in the speculation cache until decoding reaches their position.
  std::vector<CopyRegion> q_rows, token_rows;
  for (int v = 0; v < 2; ++v) {
    const int64_t pos_v = head_from_ + (v + 1) * W_, k = vertical_[static_cast<size_t>(v)];
    if (k < 0 || pos_v >= N) continue;
    q_rows.push_back({head_q_.view().rows(k, 1), vcache_q_.view().rows(2 * pos_v + v, 1)});
    token_rows.push_back({head_tok_.view().rows(k, 1), vcache_tok_.view().rows(2 * pos_v + v, 1)});
  }
  s.copy(q_rows);
  s.copy(token_rows);
}

HawkStrategy::Tree HawkStrategy::build_tree(int64_t e) const {
  const int64_t N = image_tokens();
  Tree tree;
  tree.nodes = {{-1, e - 1, e > 0 ? grid_[static_cast<size_t>(e - 1)] : 0, false, cls_ + e - 1}};
  tree.sources = {{0, 0}};
  int32_t parent = 0;
  int64_t scratch = target().config().seq_len();
  for (int64_t t = 1; t <= depth_ && e + t - 1 < N; ++t) {
    const int64_t m = e + t - 1;
    std::vector<Candidate> cands;
    const int h = horizontal_[static_cast<size_t>(t - 1)];
    // h_t at the row that predicted head_from_ (= e - 1) proposes head_from_ + t = m, within its row.
    if (head_row_ >= 0 && h >= 0 && head_from_ + t == m && (head_from_ % W_) + t < W_) cands.push_back({0, h});
    for (int v = 0; v < 2; ++v)
      if (vcached_[static_cast<size_t>(m)][static_cast<size_t>(v)]) cands.push_back({1, v});
    if (cands.empty()) break;
    const int32_t primary = static_cast<int32_t>(tree.nodes.size());
    for (size_t i = 0; i < cands.size(); ++i) {
      const bool alt = i > 0;
      tree.nodes.push_back({parent, m, 0, alt, alt ? scratch++ : cls_ + m});
      tree.sources.push_back(cands[i]);
    }
    parent = primary;
  }
  return tree;
}

GptQueries HawkStrategy::tree_queries(const Tree& tree, int64_t e) const {
  const int64_t M = static_cast<int64_t>(tree.nodes.size()), T = M + (repair_position_ >= 0 ? 1 : 0);
  GptQueries q;
  ops::AttentionMaskBuilder mb(T, target().cache().slots());
  const int64_t root_slot = cls_ + e - 1;
  for (int64_t i = 0; i < M; ++i) {
    const Node& n = tree.nodes[static_cast<size_t>(i)];
    q.positions.push_back(i == 0 ? root_slot : cls_ + n.position);
    q.slots.push_back(static_cast<uint32_t>(n.slot));
    if (i > 0 || e > 0) q.tokens.push_back(static_cast<uint32_t>(n.token));
    mb.see_prefix(i, root_slot + 1);
    for (int32_t a = n.parent; a > 0; a = tree.nodes[static_cast<size_t>(a)].parent)
      mb.see(i, tree.nodes[static_cast<size_t>(a)].slot);
    mb.see(i, n.slot);
  }
  if (repair_position_ >= 0) {
    q.positions.push_back(cls_ + repair_position_);
    q.slots.push_back(static_cast<uint32_t>(cls_ + repair_position_));
    q.tokens.push_back(static_cast<uint32_t>(grid_[static_cast<size_t>(repair_position_)]));
    mb.see_prefix(M, cls_ + repair_position_ + 1);
  }
  q.mask = mb.pack();
  q.conditions = target().conditions();
  return q;
}

void HawkStrategy::record_candidates(const Tree& tree, const GptBatch& batch, int64_t e) {
  CommandStream& s = target().stream();
  const int64_t M = static_cast<int64_t>(tree.nodes.size());
  std::vector<CopyRegion> q_rows, token_rows;
  for (int64_t i = 1; i < M; ++i) {
    const Candidate& c = tree.sources[static_cast<size_t>(i)];
    const int64_t cached = 2 * tree.nodes[static_cast<size_t>(i)].position + c.head;
    q_rows.push_back({c.source == 0 ? head_q_.view().rows(c.head, 1) : vcache_q_.view().rows(cached, 1),
                      q_tree_.view().rows(i, 1)});
    token_rows.push_back({c.source == 0 ? head_tok_.view().rows(c.head, 1) : vcache_tok_.view().rows(cached, 1),
                          tokens_.view().rows(i, 1)});
  }
  s.copy(q_rows);
  s.copy(token_rows);
  if (M > 1) s.copy(tokens_.view().rows(1, M - 1), batch.token_ids().rows(e > 0 ? 1 : 0, M - 1));
}

void HawkStrategy::record_tests(const Tree& tree, uint32_t round) {
  CommandStream& s = target().stream();
  const int64_t M = static_cast<int64_t>(tree.nodes.size()), N = image_tokens();
  auto pos_view = [&](int64_t n) { return positions_.view().rows(std::min(n, N), 1); };
  int64_t next_residual = 0;
  for (int64_t p = 0; p < M; ++p) {
    TensorView r = probs_.view().rows(p, 1);
    int sibling = 0;
    for (int64_t c = p + 1; c < M; ++c) {
      if (tree.nodes[static_cast<size_t>(c)].parent != p) continue;
      const TensorView qc = q_tree_.view().rows(c, 1);
      ops::spec_accept(s, r, qc, tokens_.view().rows(c, 1), pos_view(tree.nodes[static_cast<size_t>(c)].position),
                       in_.seed, philox::purpose_word(philox::Purpose::Accept, round * 8u + static_cast<uint32_t>(sibling)),
                       accept_.view().rows(c, 1));
      const TensorView next = residuals_.view().rows(next_residual++, 1);
      ops::residual_distribution(s, r, qc, next);
      r = next;
      ++sibling;
    }
    const int64_t after = tree.nodes[static_cast<size_t>(p)].position + 1;
    ops::spec_residual_sample(s, r, zeros_.view(), pos_view(after), in_.seed,
                              philox::purpose_word(philox::Purpose::Residual, round), final_.view().rows(p, 1));
  }
}

int32_t HawkStrategy::walk_and_commit(Tree& tree, const Readback& r, StepEvent& e) {
  std::vector<Node>& nodes = tree.nodes;
  const int64_t M = static_cast<int64_t>(nodes.size()), N = image_tokens();
  int32_t cur = 0;
  std::vector<int32_t> path;
  bool had_children = false;
  for (;;) {
    int32_t next = -1;
    had_children = false;
    for (int64_t c = cur + 1; c < M; ++c) {
      if (nodes[static_cast<size_t>(c)].parent != cur) continue;
      had_children = true;
      if (r.accept[static_cast<size_t>(c)]) {
        next = static_cast<int32_t>(c);
        break;
      }
    }
    if (next < 0) break;
    path.push_back(next);
    cur = next;
  }
  for (int64_t i = 1; i < M; ++i) {
    e.proposed.push_back(static_cast<int32_t>(nodes[static_cast<size_t>(i)].position));
    e.proposed_tokens.push_back(nodes[static_cast<size_t>(i)].token);
  }
  for (int32_t n : path) {
    const Node& nd = nodes[static_cast<size_t>(n)];
    grid_[static_cast<size_t>(nd.position)] = nd.token;
    e.accepted.push_back(static_cast<int32_t>(nd.position));
  }
  // The token after the walk: the last residual's sample (none when the walk reached the end).
  const int64_t f_pos = nodes[static_cast<size_t>(cur)].position + 1;
  if (f_pos < N) {
    const int32_t f = checked_token(r.final_token[static_cast<size_t>(cur)], f_pos);
    grid_[static_cast<size_t>(f_pos)] = f;
    if (had_children) {
      e.rejected.push_back(static_cast<int32_t>(f_pos));
      e.resampled.push_back(static_cast<int32_t>(f_pos));
    } else {
      e.accepted.push_back(static_cast<int32_t>(f_pos));
      if (M == 1) {
        e.proposed.push_back(static_cast<int32_t>(f_pos));
        e.proposed_tokens.push_back(f);
      }
    }
  }
  committed_ = std::min(f_pos + 1, N);
  ++nfe_;
  repair_position_ = !path.empty() && nodes[static_cast<size_t>(path.back())].alternate
                         ? nodes[static_cast<size_t>(path.back())].position
                         : -1;
  return cur;
}

void HawkStrategy::decode(StepEvent& e_out) {
  TargetSession& t = target();
  const int64_t e = committed_, N = image_tokens(), rows = t.rows();
  const uint32_t round = static_cast<uint32_t>(step_);
  Tree tree = build_tree(e);
  const int64_t M = static_cast<int64_t>(tree.nodes.size()), T = M + (repair_position_ >= 0 ? 1 : 0);
  const GptBatch& batch = t.batch(tree_queries(tree, e));

  // This step's proposals (the vertical ones enter the speculation cache), then each candidate's
  // q row and token are gathered; the tokens also feed the forward (after the root's, if any).
  if (head_row_ >= 0) record_heads();
  record_candidates(tree, batch, e);
  const GptOutputs out = t.forward(batch);
  ops::SamplerParams none = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::None, 0);
  ops::sampler(t.stream(), out.logits, {}, none, probs_.view().rows(0, T), {});
  record_tests(tree, round);
  // The next step's heads run on one of these rows, picked by the walk.
  t.stream().copy(out.hidden, hidden_.view().rows(0, rows * T));
  t.submit_and_wait();
  Readback r{std::vector<uint32_t>(static_cast<size_t>(M)), std::vector<uint32_t>(static_cast<size_t>(M))};
  std::vector<uint32_t> toks(static_cast<size_t>(M));
  t.ctx().download(accept_, 0, r.accept.data(), r.accept.size() * 4);
  t.ctx().download(final_, 0, r.final_token.data(), r.final_token.size() * 4);
  t.ctx().download(tokens_, 0, toks.data(), toks.size() * 4);
  for (int64_t i = 1; i < M; ++i) tree.nodes[static_cast<size_t>(i)].token = static_cast<int32_t>(toks[static_cast<size_t>(i)]);
  const int32_t cur = walk_and_commit(tree, r, e_out);

  // Proposals for the next step from the row that predicted the token after the walk (made at
  // the start of the next submit).
  head_row_ = cur;
  head_from_ = tree.nodes[static_cast<size_t>(cur)].position + 1;
  head_queries_ = T;
  head_round_ = round;
  for (int v = 0; v < 2; ++v) {
    const int64_t pos = head_from_ + (v + 1) * W_;
    if (vertical_[static_cast<size_t>(v)] >= 0 && pos < N) vcached_[static_cast<size_t>(pos)][static_cast<size_t>(v)] = true;
  }
}

namespace {

StrategyDescriptor hawk() {
  StrategyDescriptor d;
  d.name = "hawk";
  d.order = 80;
  d.summary = "Hawk: horizontal and vertical draft heads propose a tree of candidates, verified at once";
  d.reference = "Chen et al., NeurIPS 2025, Hawk (spatial draft heads); tree shape ours (docs/methods.md)";
  d.options = {OptionSpec::integer("depth", kMaxDepth, 1, kMaxDepth, "candidate depths per step (horizontal heads used)")};
  d.lossless = [](const OptionValues&) { return true; };
  d.needs = [](const OptionValues&) {
    StrategyNeeds n;
    n.heads = true;
    return n;
  };
  d.max_queries = [](const OptionValues&, const GptConfig&) { return hawk_max_queries(); };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    return std::make_unique<HawkStrategy>(m, in, o.integer("depth"));
  };
  return d;
}

const RegisterStrategy kHawk(hawk());

}  // namespace
}  // namespace vkspec
