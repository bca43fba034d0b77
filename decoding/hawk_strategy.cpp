#include "decoding/hawk_strategy.h"

#include <algorithm>
#include <numeric>

#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"
#include "common/error.h"
#include "decoding/candidate_tree.h"

namespace vkspec {
namespace {

// Four horizontal heads (h1..h4) bound the depth; a pool holds at most h_t, v1 and v2.
constexpr int kMaxDepth = 4, kPool = 3, kMaxHeads = 8;
// The chain's scratch slots (two alternates per depth) and its forward: root, four depths of up to
// three candidates, one repair (what the earlier tree was sized with, kept so chain runs as before).
constexpr int64_t kChainScratch = 8, kChainQueries = 1 + kPool * kMaxDepth + 1;
// The full Cartesian product of three candidates over four depths: 3 + 9 + 27 + 81.
constexpr int64_t kMaxNodes = 120;

DraftHeads& checked_heads(const ModelSet& m) {
  if (!m.heads)
    throw Error("hawk: needs draft heads (--heads FILE, trained on the target by tools/train_draft_heads.py)");
  return *m.heads;
}

int64_t max_nodes(const HawkOptions& o) {
  return hawk_tree_max_nodes(HawkTreeKind::Cartesian, o.depth, kPool, o.nodes);
}

}  // namespace

HawkDirections parse_hawk_directions(const std::string& name) {
  if (name == "horizontal") return HawkDirections::Horizontal;
  if (name == "vertical") return HawkDirections::Vertical;
  if (name == "both") return HawkDirections::Both;
  throw Error("hawk: unknown directions '" + name + "' (expected horizontal, vertical or both)");
}

int64_t hawk_max_queries(const HawkOptions& o) {
  // Cartesian: every path node may sit in a scratch slot, so up to `depth` repairs.
  return o.tree == HawkTreeKind::Chain ? kChainQueries : 1 + max_nodes(o) + o.depth;
}

HawkStrategy::HawkStrategy(const ModelSet& models, const StrategyInputs& in, const HawkOptions& options)
    : Strategy("hawk", models, in, hawk_max_queries(options),
               options.tree == HawkTreeKind::Chain ? kChainScratch : max_nodes(options)),
      W_(models.target->config().grid_size),
      cls_(models.target->config().cls_token_num),
      opt_(options),
      use_h_(options.directions != HawkDirections::Vertical),
      use_v_(options.directions != HawkDirections::Horizontal),
      heads_(checked_heads(models)),
      tree_rows_(*models.ctx, hawk_max_queries(options), "hawk") {
  if (opt_.depth < 1 || opt_.depth > kMaxDepth || opt_.nodes < 1 || opt_.nodes > kMaxNodes)
    throw Error("hawk: depth " + std::to_string(opt_.depth) + " or node budget " + std::to_string(opt_.nodes) +
                " out of range (1.." + std::to_string(kMaxDepth) + ", 1.." + std::to_string(kMaxNodes) + ")");
  for (int j = 1; j <= opt_.depth; ++j) horizontal_.push_back(heads_.index("h" + std::to_string(j)));
  vertical_ = {heads_.index("v1"), heads_.index("v2")};
  for (int v = 0; v < 2; ++v)
    if (vertical_[v] >= 0 && heads_.heads()[static_cast<size_t>(vertical_[v])].offset != (v + 1) * W_)
      throw Error("hawk: head v" + std::to_string(v + 1) + " of " + heads_.path() + " does not predict " +
                  std::to_string(v + 1) + " rows below");
  for (int j = 0; j < opt_.depth; ++j)
    if (horizontal_[static_cast<size_t>(j)] >= 0 &&
        heads_.heads()[static_cast<size_t>(horizontal_[static_cast<size_t>(j)])].offset != j + 1)
      throw Error("hawk: head h" + std::to_string(j + 1) + " of " + heads_.path() + " has the wrong offset");
  const int64_t H = static_cast<int64_t>(heads_.heads().size());
  // A head's Philox round is step * 8 + head index: more heads would share numbers.
  if (H > kMaxHeads)
    throw Error("hawk: " + heads_.path() + " has " + std::to_string(H) + " heads, at most 8 are supported");
  const int64_t max_q = hawk_max_queries(opt_), V = vocab(), N = image_tokens(), rows = target().rows();
  const int64_t groups = H + 2 * kMaxDepth;  // every head on the last row, v1 and v2 on the others
  Context& ctx = *models.ctx;
  const int64_t dim = models.target->config().dim;
  vcached_.assign(static_cast<size_t>(N), {false, false});
  probs_ = ctx.tensor(DType::F32, {max_q, V}, "hawk target probabilities");
  q_tree_ = ctx.tensor(DType::F32, {max_q, V}, "hawk candidate distributions");
  residuals_ = ctx.tensor(DType::F32, {max_q, V}, "hawk residual distributions");
  vcache_q_ = ctx.tensor(DType::F32, {2 * N, V}, "hawk speculation cache");
  tokens_ = ctx.tensor(DType::U32, {max_q}, "hawk candidate tokens", MemoryUsage::Readback);
  accept_ = ctx.tensor(DType::U32, {max_q}, "hawk acceptances", MemoryUsage::Readback);
  final_ = ctx.tensor(DType::U32, {max_q}, "hawk next tokens", MemoryUsage::Readback);
  vcache_tok_ = ctx.tensor(DType::U32, {2 * N}, "hawk speculation cache tokens");
  hidden_ = ctx.tensor(DType::F32, {rows * max_q, dim}, "hawk hidden states");
  head_in_ = ctx.tensor(DType::F32, {rows * (kMaxDepth + 1), dim}, "hawk head inputs");
  head_pos_ = ctx.tensor(DType::U32, {groups}, "hawk head positions", MemoryUsage::Upload);
  head_purpose_ = ctx.tensor(DType::U32, {groups}, "hawk head purposes", MemoryUsage::Upload);
  head_q_ = ctx.tensor(DType::F32, {groups, V}, "hawk head distributions");
  head_tok_ = ctx.tensor(DType::U32, {groups}, "hawk head tokens");
}

std::vector<HawkStrategy::HeadGroup> HawkStrategy::head_groups() const {
  std::vector<HeadGroup> g;
  if (head_rows_.empty()) return g;
  const int64_t last = static_cast<int64_t>(head_rows_.size()) - 1;
  auto is_v = [&](int k) { return k == vertical_[0] || k == vertical_[1]; };
  auto is_h = [&](int k) { return std::find(horizontal_.begin(), horizontal_.end(), k) != horizontal_.end(); };
  // Both directions: every head of the file, as the earlier tree ran them (chain keeps its numbers).
  for (int k = 0; k < static_cast<int>(heads_.heads().size()); ++k)
    if (opt_.directions == HawkDirections::Both || (use_h_ && is_h(k)) || (use_v_ && is_v(k))) g.push_back({k, last});
  for (int64_t r = 0; r < last; ++r)
    for (int v = 0; v < 2; ++v)
      if (vertical_[static_cast<size_t>(v)] >= 0) g.push_back({vertical_[static_cast<size_t>(v)], r});
  return g;
}

void HawkStrategy::record_heads() {
  CommandStream& s = target().stream();
  const int64_t N = image_tokens(), V = vocab(), rows = target().rows();
  const int64_t R = static_cast<int64_t>(head_rows_.size());
  const std::vector<HeadGroup> groups = head_groups();
  // Each head row of each batch row of the previous forward, [R * rows, dim] as the heads read it.
  std::vector<CopyRegion> inputs;
  for (int64_t r = 0; r < R; ++r)
    for (int64_t b = 0; b < rows; ++b)
      inputs.push_back({hidden_.view().rows(b * head_queries_ + head_rows_[static_cast<size_t>(r)], 1),
                        head_in_.view().rows(r * rows + b, 1)});
  s.copy(inputs);
  std::vector<uint32_t> pos, purposes;
  std::vector<std::pair<int, int64_t>> picks;  // block g = group g's [cond, uncond]
  last_group_.assign(heads_.heads().size(), -1);
  for (size_t g = 0; g < groups.size(); ++g) {
    const int64_t from = head_from_[static_cast<size_t>(groups[g].input)];
    pos.push_back(static_cast<uint32_t>(std::min(from + heads_.heads()[static_cast<size_t>(groups[g].head)].offset,
                                                 N)));
    purposes.push_back(philox::purpose_word(philox::Purpose::DraftHead,
                                            head_round_ * 8u + static_cast<uint32_t>(groups[g].head)));
    for (int64_t b = 0; b < rows; ++b) picks.push_back({groups[g].head, groups[g].input * rows + b});
    if (groups[g].input == R - 1) last_group_[static_cast<size_t>(groups[g].head)] = static_cast<int>(g);
  }
  pos.resize(static_cast<size_t>(head_pos_.shape()[0]), 0u);  // an upload fills the whole tensor
  purposes.resize(pos.size(), 0u);
  models_.ctx->upload(head_pos_, pos.data(), pos.size() * 4);
  models_.ctx->upload(head_purpose_, purposes.data(), purposes.size() * 4);
  target().set_stage(stage::kHeads);
  // Only the head rows: the heads' inner matmul over exactly these rows (the chain's one row gives
  // the numbers it always gave).
  const TensorView logits = heads_.logits_at(s, head_in_.view().rows(0, R * rows), picks);
  target().set_stage(stage::kSampling);
  ++head_forwards_;
  // Every group in one dispatch: its [cond, uncond] rows are interleaved CFG pairs, and each group
  // draws under its own head's purpose (the bits one sampler call per group gave).
  const int64_t G = static_cast<int64_t>(groups.size());
  ops::SamplerParams sp = in_.sampler.op_params(V, in_.seed, ops::SampleMode::Categorical, 0);
  sp.cfg_layout = ops::CfgLayout::Interleaved;
  ops::sampler(s, logits.rows(0, G * rows), head_pos_.view().rows(0, G), sp, head_q_.view().rows(0, G),
               head_tok_.view().rows(0, G), head_purpose_.view().rows(0, G));
  // The vertical proposals wait in the speculation cache until decoding reaches their position.
  std::vector<CopyRegion> q_rows, token_rows;
  for (size_t g = 0; g < groups.size(); ++g)
    for (int v = 0; v < 2; ++v) {
      if (groups[g].head != vertical_[static_cast<size_t>(v)]) continue;
      const int64_t pos_v = head_from_[static_cast<size_t>(groups[g].input)] + (v + 1) * W_,
                    gi = static_cast<int64_t>(g);
      if (pos_v >= N) continue;
      q_rows.push_back({head_q_.view().rows(gi, 1), vcache_q_.view().rows(2 * pos_v + v, 1)});
      token_rows.push_back({head_tok_.view().rows(gi, 1), vcache_tok_.view().rows(2 * pos_v + v, 1)});
    }
  s.copy(q_rows);
  s.copy(token_rows);
}

std::vector<HawkStrategy::Candidate> HawkStrategy::pool(int64_t e, int64_t t) const {
  const int64_t m = e + t - 1;
  std::vector<Candidate> horizontal, vertical;
  const int h = horizontal_[static_cast<size_t>(t - 1)];
  // h_t at the row that predicted head_from_ (= e - 1) proposes head_from_ + t = m, within its row.
  const int64_t from = head_from_.empty() ? -1 : head_from_.back();
  if (use_h_ && from >= 0 && h >= 0 && from + t == m && (from % W_) + t < W_) horizontal.push_back({0, h});
  for (int v = 0; v < 2 && use_v_; ++v)
    if (vcached_[static_cast<size_t>(m)][static_cast<size_t>(v)]) vertical.push_back({1, v});
  // Verification order: the chain's primary is the horizontal one; the paper's appendix verifies
  // the vertical candidates first, then the horizontal one.
  std::vector<Candidate>& first = opt_.tree == HawkTreeKind::Chain ? horizontal : vertical;
  const std::vector<Candidate>& second = opt_.tree == HawkTreeKind::Chain ? vertical : horizontal;
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

HawkStrategy::Tree HawkStrategy::build_tree(int64_t e) const {
  const int64_t N = image_tokens();
  std::vector<std::vector<Candidate>> pools;
  std::vector<int> sizes;
  for (int64_t t = 1; t <= opt_.depth && e + t - 1 < N; ++t) {
    pools.push_back(pool(e, t));
    sizes.push_back(static_cast<int>(pools.back().size()));
    if (pools.back().empty()) break;
  }
  Tree tree;
  tree.nodes = {{-1, e - 1, e > 0 ? grid_[static_cast<size_t>(e - 1)] : 0, false, cls_ + e - 1}};
  tree.sources = {{0, 0}};
  tree.shown = {false};
  int64_t scratch = target().config().seq_len();
  const std::vector<HawkTreeNode> shape = hawk_tree_shape(opt_.tree, sizes, opt_.nodes);
  for (size_t i = 1; i < shape.size(); ++i) {
    const HawkTreeNode& s = shape[i];
    const int64_t m = e + s.depth - 1;
    tree.nodes.push_back({s.parent, m, 0, !s.canonical, s.canonical ? cls_ + m : scratch++});
    tree.sources.push_back(pools[static_cast<size_t>(s.depth - 1)][static_cast<size_t>(s.pick)]);
    tree.shown.push_back(s.first_pick);
  }
  return tree;
}

GptQueries HawkStrategy::tree_queries(const Tree& tree, int64_t e) const {
  return candidate_tree_queries(target(), tree.nodes, e, repairs_, grid_);
}

void HawkStrategy::record_candidates(const Tree& tree, const GptBatch& batch, int64_t e) {
  CommandStream& s = target().stream();
  const int64_t M = static_cast<int64_t>(tree.nodes.size());
  std::vector<CopyRegion> q_rows, token_rows;
  for (int64_t i = 1; i < M; ++i) {
    const Candidate& c = tree.sources[static_cast<size_t>(i)];
    const int64_t cached = 2 * tree.nodes[static_cast<size_t>(i)].position + c.head;
    const int64_t g = c.source == 0 ? last_group_[static_cast<size_t>(c.head)] : -1;
    if (c.source == 0 && g < 0) throw Error("hawk: head " + std::to_string(c.head) + " proposes but did not run");
    q_rows.push_back({c.source == 0 ? head_q_.view().rows(g, 1) : vcache_q_.view().rows(cached, 1),
                      q_tree_.view().rows(i, 1)});
    token_rows.push_back({c.source == 0 ? head_tok_.view().rows(g, 1) : vcache_tok_.view().rows(cached, 1),
                          tokens_.view().rows(i, 1)});
  }
  s.copy(q_rows);
  s.copy(token_rows);
  if (M > 1) s.copy(tokens_.view().rows(1, M - 1), batch.token_ids().rows(e > 0 ? 1 : 0, M - 1));
}

void HawkStrategy::record_tests(const Tree& tree, uint32_t round) {
  // Each node's children in index order against its running residual, then its next token from
  // what remains (vertical candidates first, as the tree puts them): ops::tree_tests.
  ops::TreeTests t;
  t.probs = probs_.view();
  t.q = q_tree_.view();
  t.draft = tokens_.view();
  t.scratch = residuals_.view();
  t.seed = in_.seed;
  t.accept_purpose = philox::purpose_word(philox::Purpose::Accept, round * 8u);
  t.residual_purpose = philox::purpose_word(philox::Purpose::Residual, round);
  t.accept = accept_.view();
  t.final_token = final_.view();
  record_tree_tests(target().stream(), target().ctx(), tree.nodes, image_tokens(), tree_rows_, t);
}

std::vector<int32_t> HawkStrategy::walk_and_commit(const Tree& tree, const Readback& r, StepEvent& e) {
  const std::vector<Node>& nodes = tree.nodes;
  const int64_t M = static_cast<int64_t>(nodes.size());
  AcceptedPath walk = accepted_path(nodes, r.accept);
  for (int64_t i = 1; i < M; ++i) {
    if (!tree.shown[static_cast<size_t>(i)]) continue;  // a candidate repeated under another parent
    e.proposed.push_back(static_cast<int32_t>(nodes[static_cast<size_t>(i)].position));
    e.proposed_tokens.push_back(nodes[static_cast<size_t>(i)].token);
  }
  const PathCommit done = commit_accepted_path(
      nodes, walk, r.final_token, [this](uint32_t t, int64_t p) { return checked_token(t, p); }, grid_, e, repairs_);
  if (done.bonus_position >= 0 && M == 1) {  // no candidates: the step's one token is its proposal
    e.proposed.push_back(static_cast<int32_t>(done.bonus_position));
    e.proposed_tokens.push_back(done.bonus_token);
  }
  committed_ = done.end;
  ++nfe_;
  return std::move(walk.path);
}

void HawkStrategy::decode(StepEvent& e_out) {
  TargetSession& t = target();
  const int64_t e = committed_, N = image_tokens(), rows = t.rows();
  const uint32_t round = static_cast<uint32_t>(step_);
  Tree tree = build_tree(e);
  const int64_t M = static_cast<int64_t>(tree.nodes.size()), T = M + static_cast<int64_t>(repairs_.size());
  const GptBatch& batch = t.batch(tree_queries(tree, e));

  // This step's proposals (the vertical ones enter the speculation cache), then each candidate's
  // q row and token are gathered; the tokens also feed the forward (after the root's, if any).
  if (!head_rows_.empty()) record_heads();
  record_candidates(tree, batch, e);
  const GptOutputs out = t.forward(batch);
  ops::SamplerParams none = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::None, 0);
  ops::sampler(t.stream(), out.logits, {}, none, probs_.view().rows(0, T), {});
  record_tests(tree, round);
  // The next step's heads run on some of these rows, picked by the walk.
  t.stream().copy(out.hidden, hidden_.view().rows(0, rows * T));
  t.submit_and_wait();
  Readback r{std::vector<uint32_t>(static_cast<size_t>(M)), std::vector<uint32_t>(static_cast<size_t>(M))};
  std::vector<uint32_t> toks(static_cast<size_t>(M));
  t.ctx().download(accept_, 0, r.accept.data(), r.accept.size() * 4);
  t.ctx().download(final_, 0, r.final_token.data(), r.final_token.size() * 4);
  t.ctx().download(tokens_, 0, toks.data(), toks.size() * 4);
  for (int64_t i = 1; i < M; ++i)
    tree.nodes[static_cast<size_t>(i)].token = static_cast<int32_t>(toks[static_cast<size_t>(i)]);
  const std::vector<int32_t> path = walk_and_commit(tree, r, e_out);

  // Proposals for the next step (made at the start of its submit): every head from the row that
  // predicted the token after the walk; with the cartesian tree the vertical heads also from the
  // rows that predicted the accepted tokens, so every position gets its vertical proposals.
  head_rows_.clear();
  head_from_.clear();
  const bool every_row = opt_.tree == HawkTreeKind::Cartesian && use_v_;
  for (size_t i = every_row ? 0 : path.size() - 1; i < path.size(); ++i) {
    head_rows_.push_back(path[i]);
    head_from_.push_back(tree.nodes[static_cast<size_t>(path[i])].position + 1);
  }
  head_queries_ = T;
  head_round_ = round;
  for (int64_t from : head_from_)
    for (int v = 0; v < 2 && use_v_; ++v) {
      const int64_t pos = from + (v + 1) * W_;
      if (vertical_[static_cast<size_t>(v)] >= 0 && pos < N)
        vcached_[static_cast<size_t>(pos)][static_cast<size_t>(v)] = true;
    }
}

namespace {

HawkOptions hawk_options(const OptionValues& o) {
  HawkOptions h;
  h.depth = o.integer("depth");
  h.tree = parse_hawk_tree_kind(o.choice("tree"));
  h.directions = parse_hawk_directions(o.choice("directions"));
  h.nodes = o.integer("nodes");
  return h;
}

StrategyDescriptor hawk() {
  StrategyDescriptor d;
  d.name = "hawk";
  d.order = 80;
  d.summary = "Hawk: horizontal and vertical draft heads propose a Cartesian tree of candidates, verified at once";
  d.reference = "Chen et al., NeurIPS 2025, Hawk (spatial draft heads, Cartesian candidate tree); --tree chain ours "
                "(docs/methods.md)";
  d.options = {
      OptionSpec::integer("depth", kMaxDepth, 1, kMaxDepth, "candidate depths per step (horizontal heads used)"),
      OptionSpec::choice("tree", "cartesian", {"cartesian", "chain"},
                         "cartesian: the paper's tree, every node of a depth has the next depth's whole candidate "
                         "pool as children; chain: ours, one primary per depth with leaf alternates"),
      OptionSpec::choice("directions", "both", {"horizontal", "vertical", "both"},
                         "which draft heads propose: the horizontal ones (h1..h4), the vertical ones (v1, v2, "
                         "from the speculation cache) or both (the paper's spatial heads)"),
      OptionSpec::integer(
          "nodes", 12, 1, kMaxNodes,
          "most candidates per tree besides the root (the target runs up to 1 + nodes + depth "
          "queries); the full product of 3 candidates over 4 depths is 120; chain: at most 3 per depth"),
  };
  d.lossless = [](const OptionValues&) { return true; };
  d.needs = [](const OptionValues&) {
    StrategyNeeds n;
    n.heads = true;
    return n;
  };
  d.max_queries = [](const OptionValues& o, const GptConfig&) { return hawk_max_queries(hawk_options(o)); };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    return std::make_unique<HawkStrategy>(m, in, hawk_options(o));
  };
  return d;
}

const RegisterStrategy kHawk(hawk());

}  // namespace
}  // namespace vkspec
