#include "decoding/eagle_strategy.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "common/error.h"
#include "decoding/candidate_tree.h"
#include "engine/model/eagle_drafter.h"
#include "engine/ops/draft_tokens.h"
#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

EagleDrafter& checked_eagle(const ModelSet& m, const std::string& method) {
  if (!m.eagle)
    throw Error(method + ": needs an EAGLE drafter (--eagle-drafter FILE, trained on the target by "
                         "tools/train_eagle_drafter.py)");
  return *m.eagle;
}

}  // namespace

std::vector<OptionSpec> eagle_tree_option_specs() {
  const EagleTreeOptions d;
  return {OptionSpec::choice("tree", eagle_tree_kind_name(d.kind), {"dynamic", "static", "chain"},
                             "dynamic: EAGLE-2's tree, grown and cut by the draft probabilities; static: a fixed "
                             "tree (LANTERN++'s idea; its shape: --shape); chain: one path"),
          OptionSpec::integer("depth", d.depth, 1, ops::kMaxCutLevels,
                              "levels of the draft tree (drafter forwards per step, after "
                              "its catch-up)"),
          OptionSpec::integer("topk", d.topk, 1, static_cast<int64_t>(kEagleSiblings),
                              "proposals per expanded node, and nodes expanded per level"),
          OptionSpec::integer("nodes", d.nodes, 1, ops::kMaxCutRows - 1,
                              "candidates the target verifies besides the root (it runs up to 1 + nodes + depth "
                              "queries)"),
          OptionSpec::choice("shape", eagle_shape_name(d.shape), eagle_shape_names(),
                             "--tree static: cost: ours, the --nodes paths of best rank prior within --depth and "
                             "--topk; mc_sim_7b_63 (25 nodes) or naive_extend_57 (57): LANTERN++'s code's lists, "
                             "which fix depth, topk and nodes"),
          OptionSpec::choice("candidates", "top", {"top", "sampled"},
                             "top: the drafter's most likely tokens, tested as point masses (EAGLE-2's); sampled: "
                             "independent samples of its distribution, tested with min(1, p/q) (ours; static and "
                             "chain trees)")};
}

bool parse_eagle_sampled(const OptionValues& o) {
  const bool sampled = o.choice("candidates") == "sampled";
  if (sampled && o.choice("tree") == "dynamic")
    throw Error(o.method() + ": --candidates sampled needs --tree static or chain (a dynamic tree chooses among the "
                             "samples by their probabilities, which biases them)");
  return sampled;
}

EagleTreeOptions parse_eagle_tree_options(const OptionValues& o) {
  return parse_eagle_tree_options(o, parse_eagle_tree_kind(o.choice("tree")));
}

EagleTreeOptions parse_eagle_tree_options(const OptionValues& o, EagleTreeKind kind) {
  EagleTreeOptions t;
  t.kind = kind;
  t.depth = o.integer("depth");
  t.topk = o.integer("topk");
  t.nodes = o.integer("nodes");
  // Methods whose tree is always dynamic (vvs) do not declare --shape.
  t.shape = o.declares("shape") ? parse_eagle_shape(o.choice("shape")) : EagleShape::Cost;
  if (t.kind == EagleTreeKind::Chain) t.nodes = std::min(t.nodes, t.depth);
  if (t.shape == EagleShape::Cost) return t;
  if (t.kind != EagleTreeKind::Static)
    throw Error(o.method() + ": --shape " + o.choice("shape") + " needs --tree static");
  // A named shape fixes these; they are given only to the cost shape.
  for (const char* key : {"depth", "topk", "nodes"})
    if (o.given(key))
      throw Error(o.method() + ": --" + key + " is fixed by --shape " + o.choice("shape") + " (--shape cost takes it)");
  const ShapeExtent e = eagle_shape_extent(eagle_named_paths(t.shape));
  t.depth = e.depth;
  t.topk = e.topk;
  t.nodes = e.nodes;
  return t;
}

int64_t eagle_max_queries(const EagleTreeOptions& o) { return 1 + o.nodes + o.depth; }

int64_t eagle_max_queries(const EagleOptions& o) { return eagle_max_queries(o.tree) + (o.skip ? o.tree.depth : 0); }

namespace {

// Tree tests run a rule as the exact test against its relaxed target, node by node.
std::unique_ptr<AcceptRule> bind_tree_rule(const AcceptChoice& c, const ModelSet& models, const std::string& method,
                                           int64_t max_rows) {
  if (!c.descriptor().relaxes_target)
    throw Error(method + ": acceptance rule " + c.descriptor().name +
                " cannot judge a draft tree (it is no relaxed "
                "target; the window and draft-model methods take it)");
  return bind_accept_rule(c, models, method, max_rows);
}

}  // namespace

EagleStrategy::EagleStrategy(std::string method, const ModelSet& models, const StrategyInputs& in,
                             const EagleOptions& options)
    : Strategy(method, models, in, eagle_max_queries(options), options.tree.nodes),
      eagle_(checked_eagle(models, method)),
      opt_(options),
      step_tree_(options.tree),
      rule_(bind_tree_rule(options.rule, models, method, eagle_max_queries(options))),
      cls_(models.target->config().cls_token_num),
      drafter_cache_(eagle_.make_cache(target().rows(), eagle_max_expanded(options.tree))),
      tree_rows_(*models.ctx, eagle_max_queries(options), name()) {
  const EagleTreeOptions& o = opt_.tree;
  if (opt_.adaptive) {
    if (o.kind != EagleTreeKind::Dynamic || opt_.sampled)
      throw Error(method + ": an adaptive tree is a dynamic tree of top tokens");
    adaptive_ = std::make_unique<AdaptiveTreeShape>(*opt_.adaptive, grid_width(), image_tokens());
  }
  const int64_t needed = drafter_queries_ = std::max(o.depth + 1, eagle_max_frontier(o));
  if (eagle_.max_queries() < needed)
    throw Error(method + ": the EAGLE drafter was loaded for " + std::to_string(eagle_.max_queries()) +
                " queries, the tree needs " + std::to_string(needed));
  Context& ctx = *models.ctx;
  const int64_t max_q = eagle_max_queries(opt_), V = vocab(), N = image_tokens(), rows = target().rows();
  const int64_t D = models.target->config().dim, E = eagle_max_expanded(o);
  hidden_ = ctx.tensor(DType::F32, {rows * max_q, D}, name() + " target features");
  features_ = ctx.tensor(DType::F32, {rows * needed, D}, name() + " drafter input features");
  g_ = ctx.tensor(DType::F32, {rows * E, D}, name() + " drafted features");
  last_logits_ = ctx.tensor(DType::F32, {rows, V}, name() + " catch-up logits");
  q_ = ctx.tensor(DType::F32, {needed, V}, name() + " draft distributions");
  if (opt_.sampled) q_store_ = ctx.tensor(DType::F32, {E, V}, name() + " candidates' draft distributions");
  if (shaped_on_device())
    draft_tokens_ = ctx.tensor(DType::U32, {1 + o.nodes}, name() + " candidates", MemoryUsage::Readback);
  if (!opt_.sampled) {
    top_tokens_ = ctx.tensor(DType::U32, {E, max_top_width()}, name() + " top tokens");
    top_values_ = ctx.tensor(DType::F32, {E, max_top_width()}, name() + " top tokens' probabilities");
  }
  if (!shaped_on_device()) allocate_dynamic_tree(ctx);
  probs_ = ctx.tensor(DType::F32, {max_q, V}, name() + " target probabilities");
  q_tree_ = ctx.tensor(DType::F32, {max_q, V}, name() + " candidate point masses");
  residuals_ = ctx.tensor(DType::F32, {max_q, V}, name() + " residual distributions");
  if (!rule_->exact()) {
    relaxed_ = ctx.tensor(DType::F32, {max_q, V}, name() + " relaxed targets");
    rejected_q_ = ctx.tensor(DType::F32, {max_q, V}, name() + " draft distributions after a rejection");
  }
  zeros_ = ctx.tensor(DType::F32, {1, V}, name() + " zero distribution");
  positions_ = ctx.tensor(DType::U32, {N + 1}, name() + " positions");
  std::vector<uint32_t> iota(static_cast<size_t>(N + 1));
  std::iota(iota.begin(), iota.end(), 0u);
  ctx.upload(positions_, iota.data(), iota.size() * 4);
  tokens_ = ctx.tensor(DType::U32, {max_q}, name() + " candidate tokens", MemoryUsage::Upload);
  accept_ = ctx.tensor(DType::U32, {max_q}, name() + " acceptances", MemoryUsage::Readback);
  final_ = ctx.tensor(DType::U32, {max_q}, name() + " next tokens", MemoryUsage::Readback);
  drafter_batch_ = std::make_unique<GptBatch>(ctx, eagle_.config(), rows, needed, drafter_cache_.slots());
  if (opt_.skip) allocate_skipping(ctx, models);
  target().stream().fill(zeros_.view(), 0u);  // runs with the first step
}

void EagleStrategy::choose_step_tree(int64_t c) {
  step_levels_ = 0;
  if (!adaptive_) return;
  step_size_ = adaptive_->at(c);
  step_tree_.depth = step_size_.depth;
  step_tree_.topk = step_size_.width;
  step_tree_.nodes = adaptive_->nodes(step_size_);
}

void EagleStrategy::record_step_size(int64_t c, int64_t levels, int64_t accepted, StepEvent& e) {
  if (!adaptive_) return;
  adaptive_->record(c, committed_, step_size_, levels, accepted);
  e.tree_depth = static_cast<int32_t>(step_size_.depth);
  e.tree_width = static_cast<int32_t>(step_size_.width);
}

TensorView EagleStrategy::top_rows(const Tensor& table, int64_t first, int64_t m) const {
  const int64_t k = top_width();
  return table.view().reshape({table.numel()}).rows(first * k, m * k).reshape({m, k});
}

EagleStrategy::Node EagleStrategy::root_node(int64_t c) const {
  return {-1, c - 1, c > 0 ? grid_[static_cast<size_t>(c - 1)] : 0, cls_ + c - 1, false, -1, -1};
}

std::vector<EagleStrategy::Node> EagleStrategy::verified_tree(const DraftTreeBuilder& b, int64_t c, bool drawn) const {
  std::vector<Node> tree = {root_node(c)};
  const TargetSession& t = target();
  // The verified tree: the first node of each depth in its position's slot, the others in scratch.
  const std::vector<int32_t> sel = b.select();
  const std::vector<DraftTreeNode>& nodes = b.nodes();
  std::vector<int32_t> index(nodes.size(), -1);
  index[0] = 0;
  std::set<int32_t> depth_seen;
  int64_t scratch = t.config().seq_len();
  for (size_t i = 1; i < sel.size(); ++i) {
    const DraftTreeNode& nd = nodes[static_cast<size_t>(sel[i])];
    const int64_t pos = c + nd.depth - 1;
    const bool canonical = depth_seen.insert(nd.depth).second;
    index[static_cast<size_t>(sel[i])] = static_cast<int32_t>(tree.size());
    tree.push_back({index[static_cast<size_t>(nd.parent)], pos, static_cast<int32_t>(nd.token),
                    canonical ? cls_ + pos : scratch++, !canonical, g_row_[static_cast<size_t>(nd.parent)],
                    drawn ? sel[i] : -1});
  }
  return tree;
}

GptQueries EagleStrategy::tree_queries(const std::vector<Node>& tree, int64_t c) const {
  return candidate_tree_queries(target(), tree, c, repairs_, grid_);
}

void EagleStrategy::record_tests(const std::vector<Node>& tree, uint32_t round) {
  CommandStream& s = target().stream();
  const int64_t M = static_cast<int64_t>(tree.size()), N = image_tokens();
  if (rule_->exact()) {  // the loop below in one dispatch, the same numbers
    ops::TreeTests t;
    t.probs = probs_.view();
    t.q = q_tree_.view();
    t.draft = tokens_.view();
    t.scratch = residuals_.view();
    t.seed = in_.seed;
    t.accept_purpose = philox::purpose_word(philox::Purpose::Accept, round * kEagleSiblings);
    t.residual_purpose = philox::purpose_word(philox::Purpose::Residual, round);
    t.accept = accept_.view();
    t.final_token = final_.view();
    record_tree_tests(s, target().ctx(), tree, N, tree_rows_, t);
    return;
  }
  auto pos_view = [&](int64_t n) { return positions_.view().rows(std::min(n, N), 1); };
  int64_t next_residual = 0, next_relaxed = 0;
  for (int64_t p = 0; p < M; ++p) {
    TensorView r = probs_.view().rows(p, 1);
    uint32_t sibling = 0;
    for (int64_t c = p + 1; c < M; ++c) {
      if (tree[static_cast<size_t>(c)].parent != p) continue;
      const TensorView qc = q_tree_.view().rows(c, 1), token = tokens_.view().rows(c, 1);
      const int64_t scratch_row = next_relaxed++;  // the rule's rows for this node (the rule is not exact)
      const TensorView target_row = rule_->record_target(s, r, token, relaxed_.view().rows(scratch_row, 1));
      ops::spec_accept(s, target_row, qc, token, pos_view(tree[static_cast<size_t>(c)].position),
                       {in_.seed, philox::purpose_word(philox::Purpose::Accept, round * kEagleSiblings + sibling)},
                       accept_.view().rows(c, 1));
      const AcceptRule::Rejection left =
          rule_->record_rejection(s, r, target_row, qc, token, rejected_q_.view().rows(scratch_row, 1));
      const TensorView next = residuals_.view().rows(next_residual++, 1);
      ops::residual_distribution(s, left.from, left.minus, next);
      r = next;
      ++sibling;
    }
    ops::spec_residual_sample(s, r, zeros_.view(), pos_view(tree[static_cast<size_t>(p)].position + 1),
                              {in_.seed, philox::purpose_word(philox::Purpose::Residual, round)},
                              final_.view().rows(p, 1));
  }
}

std::vector<int32_t> EagleStrategy::walk_and_commit(const std::vector<Node>& tree, StepEvent& e) {
  const int64_t M = static_cast<int64_t>(tree.size());
  AcceptedPath walk = accepted_path(tree, accept_host_);
  std::set<std::pair<int64_t, int32_t>> listed;  // a candidate repeated under another parent once
  for (int64_t i = 1; i < M; ++i) {
    const Node& n = tree[static_cast<size_t>(i)];
    if (!listed.insert({n.position, n.token}).second) continue;
    e.proposed.push_back(static_cast<int32_t>(n.position));
    e.proposed_tokens.push_back(n.token);
  }
  const PathCommit done = commit_accepted_path(
      tree, walk, final_host_, [this](uint32_t t, int64_t p) { return checked_token(t, p); }, grid_, e, repairs_);
  if (done.bonus_position >= 0 && !listed.count({done.bonus_position, done.bonus_token})) {
    e.proposed.push_back(static_cast<int32_t>(done.bonus_position));
    e.proposed_tokens.push_back(done.bonus_token);
  }
  committed_ = done.end;
  ++nfe_;
  return std::move(walk.path);
}

void EagleStrategy::record_candidate_rows(const std::vector<Node>& tree, const GptBatch& batch) {
  TargetSession& t = target();
  CommandStream& s = t.stream();
  const int64_t M = static_cast<int64_t>(tree.size());
  std::vector<uint32_t> toks(static_cast<size_t>(M), ops::kNoToken);
  for (int64_t i = 1; i < M; ++i)
    toks[static_cast<size_t>(i)] = static_cast<uint32_t>(tree[static_cast<size_t>(i)].token);
  t.ctx().upload(tokens_, 0, toks.data(), toks.size() * 4);
  // Tokens chosen on the GPU reach the target's batch and the tests in the stream (node i is query
  // i: the root is fed the last committed token).
  std::vector<CopyRegion> drawn;
  for (int64_t i = 1; i < M; ++i) {
    const int32_t id = tree[static_cast<size_t>(i)].draft_id;
    if (id < 0) continue;
    drawn.push_back({draft_tokens_.view().rows(id, 1), batch.token_ids().rows(i, 1)});
    drawn.push_back({draft_tokens_.view().rows(id, 1), tokens_.view().rows(i, 1)});
  }
  if (!drawn.empty()) s.copy(drawn);
  if (M < 2) return;
  if (opt_.sampled) {
    std::vector<CopyRegion> q_rows;
    for (int64_t i = 1; i < M; ++i)
      q_rows.push_back({q_store_.view().rows(tree[static_cast<size_t>(i)].q_row, 1), q_tree_.view().rows(i, 1)});
    s.copy(q_rows);
  } else {  // one dispatch, where fills from the host's tokens would be two transfers per node
    ops::point_masses(s, tokens_.view().rows(1, M - 1), q_tree_.view().rows(1, M - 1));
  }
}

void EagleStrategy::resolve_device_tokens(std::vector<Node>& tree) {
  if (!shaped_on_device()) return;
  TargetSession& t = target();
  drawn_host_.resize(static_cast<size_t>(draft_tokens_.shape()[0]));
  t.ctx().download(draft_tokens_, 0, drawn_host_.data(), drawn_host_.size() * 4);
  for (size_t i = 1; i < tree.size(); ++i) {
    Node& n = tree[i];
    if (n.draft_id < 0) continue;
    const uint32_t x = drawn_host_[static_cast<size_t>(n.draft_id)];
    n.token = x == ops::kNoToken ? -1 : checked_token(x, n.position);
  }
}

std::vector<int32_t> EagleStrategy::drop_missing_candidates(std::vector<Node>& tree) {
  std::vector<int32_t> kept, index(tree.size(), -1);
  std::vector<Node> out;
  for (size_t i = 0; i < tree.size(); ++i) {
    Node n = tree[i];
    if (i > 0 && (n.token < 0 || index[static_cast<size_t>(n.parent)] < 0)) continue;
    if (i > 0) n.parent = index[static_cast<size_t>(n.parent)];
    index[i] = static_cast<int32_t>(out.size());
    kept.push_back(static_cast<int32_t>(i));
    out.push_back(n);
  }
  if (out.size() == tree.size()) return kept;
  for (size_t j = 0; j < kept.size(); ++j) {
    accept_host_[j] = accept_host_[static_cast<size_t>(kept[j])];
    final_host_[j] = final_host_[static_cast<size_t>(kept[j])];
  }
  accept_host_.resize(out.size());
  final_host_.resize(out.size());
  tree = std::move(out);
  return kept;
}

void EagleStrategy::decode(StepEvent& e) {
  TargetSession& t = target();
  const int64_t c = committed_, rows = t.rows();
  const uint32_t round = static_cast<uint32_t>(step_);
  int64_t levels = 0;  // a dynamic tree's, cut on the device in this submit: tree holds its placeholder rows
  std::vector<Node> tree = {root_node(c)};
  choose_step_tree(c);
  const SkipRound skip = opt_.skip && c > 0 ? skip_round(c, e, tree) : SkipRound::Verify;
  if (skip == SkipRound::Skipped) return;
  if (skip == SkipRound::VerifyGrownTree) {
    // vvs's dynamic schedule grew and cut this tree to judge it: verified as it is
  } else if (shaped_on_device()) {
    tree = record_static_tree(c);
  } else if (c > 0 && cut_on_host()) {
    tree = cut_before_forward(c, grow_dynamic_tree(c));
  } else if (c > 0) {
    levels = grow_dynamic_tree(c);
    tree = placeholder_tree(c, levels);
  }
  const int64_t M = static_cast<int64_t>(tree.size()), T = M + static_cast<int64_t>(repairs_.size());
  const std::vector<int64_t> fed_repairs = repairs_;
  const GptBatch& batch = t.batch(tree_queries(tree, c));
  if (levels > 0) {
    const int64_t n = M - 1;
    const ops::AttentionMask mask = batch.mask();
    record_cut(c, levels,
               {batch.token_ids().rows(1, n),
                batch.rope_positions().rows(1, n),
                batch.slots().rows(1, n),
                {mask.ranges.rows(1, n), mask.bits.rows(1, n)}},
               M);
  }
  record_candidate_rows(tree, batch);
  CommandStream& s = t.stream();
  const GptOutputs out = t.forward(batch);
  const ops::SamplerParams none = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::None, 0);
  ops::sampler(s, out.logits, {}, none, probs_.view().rows(0, T), {});
  record_tests(tree, round);
  // The next step's drafter catch-up reads the features of the root and the accepted path.
  s.copy(out.hidden, hidden_.view().rows(0, rows * T));
  t.submit_and_wait();
  if (levels > 0) tree = read_cut_tree(c, M);  // its rows are the forward's first queries
  accept_host_.assign(static_cast<size_t>(M), 0);
  final_host_.assign(static_cast<size_t>(M), 0);
  t.ctx().download(accept_, 0, accept_host_.data(), accept_host_.size() * 4);
  t.ctx().download(final_, 0, final_host_.data(), final_host_.size() * 4);
  resolve_device_tokens(tree);
  const std::vector<int32_t> kept = drop_missing_candidates(tree);
  const std::vector<int32_t> path = walk_and_commit(tree, e);
  record_step_size(c, c > 0 ? step_levels_ : 0, static_cast<int64_t>(path.size()) - 1, e);

  hidden_queries_ = T;
  feature_rows_.clear();  // the path's rows of the forward (its queries, before any drop)
  for (int32_t i : path) feature_rows_.push_back(kept[static_cast<size_t>(i)]);
  features_from_ring_ = last_skipped_ = false;
  if (opt_.skip) record_ring(tree, path, kept, fed_repairs, M);
  // Elements [drafter_valid_, committed_) are caught up next step: one feature per element.
  feature_rows_.resize(static_cast<size_t>(std::max<int64_t>(0, committed_ - drafter_valid_)));
}

namespace {

StrategyDescriptor eagle() {
  StrategyDescriptor d;
  d.name = "eagle";
  d.order = 45;
  d.summary = "EAGLE-2: a one-layer feature drafter proposes a dynamic tree, verified at once (lossless)";
  d.reference = "Li et al., EMNLP 2024, EAGLE-2: Faster Inference of Language Models with Dynamic Draft Trees "
                "(drafter: Li et al. 2024, EAGLE)";
  d.options = eagle_tree_option_specs();
  d.lossless = [](const OptionValues&) { return true; };
  d.needs = [](const OptionValues&) {
    StrategyNeeds n;
    n.eagle = true;
    return n;
  };
  d.max_queries = [](const OptionValues& o, const GptConfig&) {
    return eagle_max_queries(parse_eagle_tree_options(o));
  };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    EagleOptions e;
    e.tree = parse_eagle_tree_options(o);
    e.sampled = parse_eagle_sampled(o);
    return std::make_unique<EagleStrategy>("eagle", m, in, e);
  };
  return d;
}

const RegisterStrategy kEagle(eagle());

}  // namespace
}  // namespace vkspec
