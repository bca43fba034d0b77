#include "decoding/sjd_pac_strategy.h"

#include <algorithm>
#include <limits>

#include "common/error.h"
#include "decoding/hawk_tree.h"
#include "decoding/point_mass.h"
#include "engine/ops/det_math.h"
#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

// A sibling's acceptance uniform is drawn under Accept round step * 8 + sibling (ops::tree_tests).
constexpr int64_t kMaxWidth = 8, kMaxDepth = 8;
// Independent draws per node and candidate: the extra candidates are the first draws not yet taken.
constexpr int64_t kDrawsPerCandidate = 3;

// The root, the nodes, and up to D - 1 repairs of accepted alternates.
int64_t max_queries(const SjdPacOptions& o) { return o.window + o.depth - 1; }

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

int64_t sjd_pac_tree_nodes(int64_t width, int64_t depth) {
  int64_t nodes = 0, level = 1;
  for (int64_t d = 0; d < depth; ++d, level *= width) nodes += level;
  return nodes;
}

std::vector<SjdPacNode> sjd_pac_shape(const std::vector<int>& pools, int64_t chain) {
  std::vector<SjdPacNode> nodes;
  for (const HawkTreeNode& h : hawk_tree_shape(HawkTreeKind::Cartesian, pools, std::numeric_limits<int64_t>::max()))
    nodes.push_back({h.parent, h.depth, h.pick, h.canonical, h.first_pick});
  int32_t last = 0;  // the deepest main-path node: the chain continues it
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].canonical) last = static_cast<int32_t>(i);
  for (int64_t t = 0; t < chain; ++t) {
    nodes.push_back({last, nodes[static_cast<size_t>(last)].depth + 1, 0, true, true});
    last = static_cast<int32_t>(nodes.size() - 1);
  }
  return nodes;
}

SjdPacStrategy::SjdPacStrategy(const ModelSet& models, const StrategyInputs& in, const SjdPacOptions& options)
    : Strategy("sjd-pac", models, in, max_queries(options), options.window),
      opt_(options),
      cls_(models.target->config().cls_token_num),
      draws_per_node_(options.width > 1 ? kDrawsPerCandidate * options.width : 0),
      tree_rows_(*models.ctx, max_queries(options), "sjd-pac") {
  if (opt_.width < 1 || opt_.width > kMaxWidth || opt_.depth < 1 || opt_.depth > kMaxDepth)
    throw Error("sjd-pac: --width " + str(opt_.width) + " or --depth " + str(opt_.depth) + " out of range (1.." +
                str(kMaxWidth) + ", 1.." + str(kMaxDepth) + ")");
  if (opt_.width > vocab())
    throw Error("sjd-pac: --width " + str(opt_.width) + " asks for more distinct candidates than the " + str(vocab()) +
                " tokens of the vocabulary");
  const int64_t tree = sjd_pac_tree_nodes(opt_.width, opt_.depth);
  if (tree > opt_.window)
    throw Error("sjd-pac: --width " + str(opt_.width) + " --depth " + str(opt_.depth) + " make a tree of " + str(tree) +
                " nodes with the root, more than --window " + str(opt_.window));
  const int64_t max_q = max_queries(opt_), V = vocab(), N = image_tokens();
  const int64_t extra = std::max<int64_t>((opt_.width - 1) * (opt_.depth - 1), 1);
  Context& ctx = *models.ctx;
  cand_.assign(static_cast<size_t>(N), {});
  q_base_ = ctx.tensor(DType::F32, {N, V}, "sjd-pac draft distributions");
  probs_ = ctx.tensor(DType::F32, {max_q, V}, "sjd-pac target probabilities");
  q_tree_ = ctx.tensor(DType::F32, {max_q, V}, "sjd-pac candidate distributions");
  residuals_ = ctx.tensor(DType::F32, {max_q, V}, "sjd-pac residual distributions");
  if (opt_.path == SjdPacPath::Longest)
    first_child_q_ = ctx.tensor(DType::F32, {max_q, V}, "sjd-pac first children's distributions");
  multihot_ = ctx.tensor(DType::F32, {extra, V}, "sjd-pac removed candidates");
  q_extra_ = ctx.tensor(DType::F32, {extra, V}, "sjd-pac extra candidates' distributions");
  tokens_ = ctx.tensor(DType::U32, {max_q}, "sjd-pac candidate tokens", MemoryUsage::Upload);
  draw_pos_ = ctx.tensor(DType::U32, {max_q}, "sjd-pac draw positions", MemoryUsage::Upload);
  accept_ = ctx.tensor(DType::U32, {max_q}, "sjd-pac acceptances", MemoryUsage::Readback);
  final_ = ctx.tensor(DType::U32, {max_q}, "sjd-pac next tokens", MemoryUsage::Readback);
  draws_ =
      ctx.tensor(DType::U32, {std::max<int64_t>(draws_per_node_, 1), max_q}, "sjd-pac draws", MemoryUsage::Readback);
}

void SjdPacStrategy::initialise(int64_t end, int64_t tree_end) {
  const int64_t V = vocab(), W = grid_width();
  std::vector<std::pair<int64_t, uint32_t>> point_mass;
  for (int64_t n = ready_; n < end; ++n) {
    DraftInit how = opt_.init;
    if (how == DraftInit::Above && n < W) how = DraftInit::Left;  // the first row has nothing above
    if (how == DraftInit::Left && n == 0) how = DraftInit::Random;
    if (how != DraftInit::Random) {
      const int64_t from = how == DraftInit::Left ? n - 1 : n - W;
      const uint32_t tok = from < committed_ ? static_cast<uint32_t>(grid_[static_cast<size_t>(from)])
                                             : cand_[static_cast<size_t>(from)][0];
      cand_[static_cast<size_t>(n)] = {tok};
      point_mass.push_back({n, tok});
      continue;
    }
    // Distinct uniform tokens: draw k picks uniformly among the V - k tokens not yet taken, so the
    // k-th is a sample of uniform-with-the-earlier-removed, the q^(k) the tree tests it with.
    std::vector<uint32_t> taken;
    const int64_t count = n < tree_end ? opt_.width : 1;
    for (int64_t k = 0; k < count; ++k) {
      const uint32_t bits = philox::bits(in_.seed, static_cast<uint32_t>(n),
                                         philox::purpose_word(philox::Purpose::DraftInit), static_cast<uint32_t>(k));
      uint64_t pick = (static_cast<uint64_t>(bits) * static_cast<uint64_t>(V - k)) >> 32;
      uint32_t tok = 0;
      for (;; ++tok) {
        if (std::find(taken.begin(), taken.end(), tok) != taken.end()) continue;
        if (pick-- == 0) break;
      }
      taken.push_back(tok);
    }
    cand_[static_cast<size_t>(n)] = taken;
    target().stream().fill(q_base_.view().rows(n, 1), det::float_bits(1.0f / static_cast<float>(V)));
  }
  record_point_masses(target().stream(), q_base_, point_mass);
  ready_ = std::max(ready_, end);
}

std::vector<SjdPacStrategy::Node> SjdPacStrategy::build_tree(int64_t c) {
  const int64_t left = image_tokens() - c, depths = std::min(opt_.depth - 1, left);
  initialise(c + depths, c + depths);
  std::vector<int> pools;
  int64_t tree = 1, level = 1;
  for (int64_t t = 0; t < depths; ++t) {
    pools.push_back(static_cast<int>(std::min<size_t>(cand_[static_cast<size_t>(c + t)].size(),
                                                      static_cast<size_t>(opt_.width))));
    level *= pools.back();
    tree += level;
  }
  // Fewer candidates than K at a depth (the draws found no new token) leave more of L to the chain.
  const int64_t chain = std::min(opt_.window - tree, left - depths);
  initialise(c + depths + chain, c + depths);
  const std::vector<SjdPacNode> shape = sjd_pac_shape(pools, chain);
  std::vector<Node> nodes = {{-1, c - 1, c > 0 ? grid_[static_cast<size_t>(c - 1)] : 0, cls_ + c - 1, -1, true, false}};
  int64_t scratch = target().config().seq_len();
  for (size_t i = 1; i < shape.size(); ++i) {
    const SjdPacNode& s = shape[i];
    const int64_t pos = c + s.depth - 1;
    const uint32_t tok = cand_[static_cast<size_t>(pos)][static_cast<size_t>(s.pick)];
    nodes.push_back({s.parent, pos, static_cast<int32_t>(tok), s.canonical ? cls_ + pos : scratch++, s.pick,
                     s.canonical, s.first_pick});
  }
  return nodes;
}

void SjdPacStrategy::record_pending_rows() {
  std::vector<CopyRegion> rows;
  for (const auto& [row, n] : pending_) rows.push_back({probs_.view().rows(row, 1), q_base_.view().rows(n, 1)});
  target().stream().copy(rows);
  pending_.clear();
}

void SjdPacStrategy::record_candidate_rows(const std::vector<Node>& nodes, int64_t c, int64_t depths) {
  CommandStream& s = target().stream();
  const int64_t K = opt_.width, D1 = opt_.depth - 1, M = static_cast<int64_t>(nodes.size());
  if (K > 1 && depths > 0) {
    // q^(k) of position c + t = q' with its candidates 0 .. k - 1 zeroed and renormalised: the
    // residual norm(max(q' - h, 0)) against the row h with 1 at each of them.
    std::vector<std::pair<int64_t, uint32_t>> hot;
    for (int64_t k = 1; k < K; ++k)
      for (int64_t t = 0; t < depths; ++t) {
        const std::vector<uint32_t>& cn = cand_[static_cast<size_t>(c + t)];
        for (int64_t i = 0; i < k && i < static_cast<int64_t>(cn.size()); ++i)
          hot.push_back({(k - 1) * D1 + t, cn[static_cast<size_t>(i)]});
      }
    record_point_masses(s, multihot_, hot);
    for (int64_t k = 1; k < K; ++k)
      ops::residual_distribution(s, q_base_.view().rows(c, depths), multihot_.view().rows((k - 1) * D1, depths),
                                 q_extra_.view().rows((k - 1) * D1, depths));
  }
  std::vector<CopyRegion> rows;
  std::vector<uint32_t> tokens(static_cast<size_t>(M), 0u);
  for (int64_t i = 1; i < M; ++i) {
    const Node& n = nodes[static_cast<size_t>(i)];
    const TensorView src =
        n.pick == 0 ? q_base_.view().rows(n.position, 1) : q_extra_.view().rows((n.pick - 1) * D1 + n.position - c, 1);
    rows.push_back({src, q_tree_.view().rows(i, 1)});
    tokens[static_cast<size_t>(i)] = static_cast<uint32_t>(n.token);
  }
  s.copy(rows);
  models_.ctx->upload(tokens_, 0, tokens.data(), tokens.size() * 4);
}

void SjdPacStrategy::record_draws(const std::vector<Node>& nodes, uint32_t round) {
  if (draws_per_node_ == 0) return;
  CommandStream& s = target().stream();
  const int64_t M = static_cast<int64_t>(nodes.size()), N = image_tokens(), max_q = draws_.shape()[1];
  std::vector<uint32_t> pos(static_cast<size_t>(M));
  for (int64_t i = 0; i < M; ++i)
    pos[static_cast<size_t>(i)] = static_cast<uint32_t>(std::min(nodes[static_cast<size_t>(i)].position + 1, N));
  models_.ctx->upload(draw_pos_, 0, pos.data(), pos.size() * 4);
  // --path first draws from each node's p (the residual of p against itself is empty, so
  // spec_residual_sample draws from p); --path longest, as the released code, from the residual
  // norm(max(p - q, 0)) of the node's first child.
  TensorView from = probs_.view().rows(0, M);
  if (opt_.path == SjdPacPath::Longest) {
    std::vector<CopyRegion> rows;
    std::vector<bool> has_child(static_cast<size_t>(M), false);
    for (int64_t i = 1; i < M; ++i) {
      const int32_t p = nodes[static_cast<size_t>(i)].parent;
      has_child[static_cast<size_t>(p)] = true;
    }
    for (int64_t i = 0; i < M; ++i)
      if (!has_child[static_cast<size_t>(i)]) s.fill(first_child_q_.view().rows(i, 1), 0u);
    for (int64_t i = 1; i < M; ++i) {
      const int32_t p = nodes[static_cast<size_t>(i)].parent;
      if (nodes[static_cast<size_t>(i)].pick == 0)
        rows.push_back({q_tree_.view().rows(i, 1), first_child_q_.view().rows(p, 1)});
    }
    s.copy(rows);
    from = first_child_q_.view().rows(0, M);
  }
  const TensorView out = draws_.view().reshape({draws_per_node_ * max_q});
  for (int64_t d = 0; d < draws_per_node_; ++d)
    ops::spec_residual_sample(s, probs_.view().rows(0, M), from, draw_pos_.view().rows(0, M), in_.seed,
                              philox::purpose_word(philox::Purpose::Draft,
                                                   round * static_cast<uint32_t>(draws_per_node_) +
                                                       static_cast<uint32_t>(d)),
                              out.rows(d * max_q, M));
}

AcceptedPath SjdPacStrategy::choose_path(const std::vector<Node>& nodes, const std::vector<uint32_t>& accept) const {
  if (opt_.path == SjdPacPath::First) return accepted_path(nodes, accept);
  // The released rule: the deepest node whose whole path is accepted; nodes of a depth are in path
  // order (breadth first), so the first such node of the deepest depth is the lowest path index.
  const int64_t M = static_cast<int64_t>(nodes.size());
  std::vector<int32_t> depth(static_cast<size_t>(M), 0);
  std::vector<bool> ok(static_cast<size_t>(M), true);
  int32_t best = 0;
  for (int64_t i = 1; i < M; ++i) {
    const int32_t p = nodes[static_cast<size_t>(i)].parent;
    depth[static_cast<size_t>(i)] = depth[static_cast<size_t>(p)] + 1;
    ok[static_cast<size_t>(i)] = accept[static_cast<size_t>(i)] && ok[static_cast<size_t>(p)];
    if (ok[static_cast<size_t>(i)] && depth[static_cast<size_t>(i)] > depth[static_cast<size_t>(best)])
      best = static_cast<int32_t>(i);
  }
  AcceptedPath a;
  for (int32_t x = best; x >= 0; x = nodes[static_cast<size_t>(x)].parent) a.path.insert(a.path.begin(), x);
  for (int64_t i = 1; i < M; ++i) a.had_children = a.had_children || nodes[static_cast<size_t>(i)].parent == best;
  return a;
}

int64_t SjdPacStrategy::commit_path(const std::vector<Node>& nodes, const AcceptedPath& a, const Readback& r,
                                    StepEvent& e) {
  const int64_t M = static_cast<int64_t>(nodes.size()), N = image_tokens();
  for (int64_t i = 1; i < M; ++i) {
    if (!nodes[static_cast<size_t>(i)].shown) continue;  // a candidate repeated under another parent
    e.proposed.push_back(static_cast<int32_t>(nodes[static_cast<size_t>(i)].position));
    e.proposed_tokens.push_back(nodes[static_cast<size_t>(i)].token);
  }
  repairs_.clear();
  for (size_t i = 1; i < a.path.size(); ++i) {
    const Node& nd = nodes[static_cast<size_t>(a.path[i])];
    grid_[static_cast<size_t>(nd.position)] = nd.token;
    e.accepted.push_back(static_cast<int32_t>(nd.position));
    if (!nd.canonical) repairs_.push_back(nd.position);
  }
  const int32_t end = a.path.back();
  const int64_t f = nodes[static_cast<size_t>(end)].position + 1;
  if (f < N) {
    const int32_t tok = checked_token(r.final_token[static_cast<size_t>(end)], f);
    grid_[static_cast<size_t>(f)] = tok;
    if (a.had_children) {
      e.rejected.push_back(static_cast<int32_t>(f));
      e.resampled.push_back(static_cast<int32_t>(f));
    } else {
      e.accepted.push_back(static_cast<int32_t>(f));  // the bonus: a sample of the last node's p
    }
  }
  committed_ = std::min(f + 1, N);
  ++nfe_;
  return f;
}

std::vector<uint32_t> SjdPacStrategy::next_candidates(const std::vector<Node>& nodes, const std::vector<int32_t>& kids,
                                                      int32_t P, const Readback& r, int64_t j,
                                                      bool tree_position) const {
  const size_t K = static_cast<size_t>(opt_.width);
  std::vector<uint32_t> distinct;  // the node's draws, first occurrences in draw order
  for (const std::vector<uint32_t>& d : r.draws) {
    const uint32_t x = d[static_cast<size_t>(P)];
    if (std::find(distinct.begin(), distinct.end(), x) == distinct.end()) distinct.push_back(x);
  }
  std::vector<uint32_t> c;
  if (opt_.path == SjdPacPath::First) {
    // The coupled draft: the first accepted old candidate, else the residual's sample (the
    // resolution of P's multi-draft test: an exact sample of P's p), then new distinct draws of p.
    uint32_t x0 = r.final_token[static_cast<size_t>(P)];
    for (int32_t k : kids)
      if (r.accept[static_cast<size_t>(k)]) {
        x0 = static_cast<uint32_t>(nodes[static_cast<size_t>(k)].token);
        break;
      }
    c = {x0};
    for (uint32_t x : distinct)
      if (tree_position && c.size() < K && std::find(c.begin(), c.end(), x) == c.end()) c.push_back(x);
  } else {
    // The released rule: old candidate 0 kept when it passed its own test, else the residual's
    // first draw; the extra candidates are further distinct draws of that residual.
    const bool pass = !kids.empty() && r.accept[static_cast<size_t>(kids[0])];
    if (pass)
      c = {static_cast<uint32_t>(nodes[static_cast<size_t>(kids[0])].token)};
    else
      c = {distinct.empty() ? r.final_token[static_cast<size_t>(P)] : distinct[0]};
    for (size_t i = pass ? 0 : 1; tree_position && i < distinct.size() && c.size() < K; ++i) c.push_back(distinct[i]);
  }
  for (uint32_t x : c) checked_token(x, j);
  return c;
}

void SjdPacStrategy::continue_window(const std::vector<Node>& nodes, const AcceptedPath& a, const Readback& r,
                                     int64_t f) {
  const int64_t M = static_cast<int64_t>(nodes.size()), N = image_tokens();
  std::vector<std::vector<int32_t>> kids(static_cast<size_t>(M));
  for (int64_t i = 1; i < M; ++i)
    kids[static_cast<size_t>(nodes[static_cast<size_t>(i)].parent)].push_back(static_cast<int32_t>(i));
  // The node whose row predicts each position: the main path's, replaced along the committed path
  // and the branch-0 descent below its end (context closer to what was committed). Any node
  // predicting j is exact: its row depends only on tokens before j.
  std::vector<int32_t> pred(static_cast<size_t>(N + 1), -1);
  int64_t last = 0;  // the position the main path's last node predicts
  for (int64_t i = 0; i < M; ++i)
    if (nodes[static_cast<size_t>(i)].canonical) {
      pred[static_cast<size_t>(nodes[static_cast<size_t>(i)].position + 1)] = static_cast<int32_t>(i);
      last = nodes[static_cast<size_t>(i)].position + 1;
    }
  for (int32_t x = a.path.back();; x = kids[static_cast<size_t>(x)][0]) {
    pred[static_cast<size_t>(nodes[static_cast<size_t>(x)].position + 1)] = x;
    if (kids[static_cast<size_t>(x)].empty()) break;
  }
  const int64_t end = std::min(last, N - 1);
  for (int64_t j = f + 1; j <= end; ++j) {
    const int32_t P = pred[static_cast<size_t>(j)];
    if (P < 0) throw Error("sjd-pac: no node predicts position " + str(j));
    cand_[static_cast<size_t>(j)] = next_candidates(nodes, kids[static_cast<size_t>(P)], P, r, j, j < f + opt_.depth);
    pending_.push_back({P, j});
  }
  ready_ = std::max(committed_, end + 1);
}

void SjdPacStrategy::decode(StepEvent& e) {
  TargetSession& t = target();
  const int64_t c = committed_, N = image_tokens();
  const uint32_t round = static_cast<uint32_t>(step_);
  t.set_stage(stage::kSampling);
  const std::vector<Node> nodes = build_tree(c);
  const int64_t M = static_cast<int64_t>(nodes.size()), T = M + static_cast<int64_t>(repairs_.size());
  record_pending_rows();
  record_candidate_rows(nodes, c, std::min(opt_.depth - 1, N - c));
  const GptBatch& batch = t.batch(candidate_tree_queries(t, nodes, c, repairs_, grid_));
  const GptOutputs out = t.forward(batch);
  const ops::SamplerParams none = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::None, 0);
  ops::sampler(t.stream(), out.logits, {}, none, probs_.view().rows(0, T), {});
  record_tree_tests(t.stream(), t.ctx(), nodes, N, tree_rows_, probs_.view(), q_tree_.view(), tokens_.view(), in_.seed,
                    philox::purpose_word(philox::Purpose::Accept, round * 8u),
                    philox::purpose_word(philox::Purpose::Residual, round), residuals_.view(), accept_.view(),
                    final_.view());
  record_draws(nodes, round);
  t.submit_and_wait();

  Readback r{std::vector<uint32_t>(static_cast<size_t>(M)), std::vector<uint32_t>(static_cast<size_t>(M)), {}};
  t.ctx().download(accept_, 0, r.accept.data(), r.accept.size() * 4);
  t.ctx().download(final_, 0, r.final_token.data(), r.final_token.size() * 4);
  if (draws_per_node_ > 0) {
    const int64_t max_q = draws_.shape()[1];
    std::vector<uint32_t> all(static_cast<size_t>(draws_per_node_ * max_q));
    t.ctx().download(draws_, 0, all.data(), all.size() * 4);
    for (int64_t d = 0; d < draws_per_node_; ++d)
      r.draws.emplace_back(all.begin() + d * max_q, all.begin() + d * max_q + M);
  }
  const AcceptedPath a = choose_path(nodes, r.accept);
  const int64_t f = commit_path(nodes, a, r, e);
  if (f + 1 < N) continue_window(nodes, a, r, f);
  e.groups = tree_and_chain(nodes);
}

std::vector<std::vector<int32_t>> SjdPacStrategy::tree_and_chain(const std::vector<Node>& nodes) {
  std::vector<int64_t> branched;  // positions with an alternate candidate
  for (size_t i = 1; i < nodes.size(); ++i)
    if (!nodes[i].canonical) branched.push_back(nodes[i].position);
  std::vector<int32_t> tree, chain;
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (!nodes[i].canonical) continue;
    const bool in_tree = std::find(branched.begin(), branched.end(), nodes[i].position) != branched.end();
    (in_tree ? tree : chain).push_back(static_cast<int32_t>(nodes[i].position));
  }
  std::vector<std::vector<int32_t>> groups;
  for (std::vector<int32_t>* g : {&tree, &chain})
    if (!g->empty()) groups.push_back(std::move(*g));
  return groups;
}

namespace {

SjdPacOptions sjd_pac_options(const OptionValues& o) {
  SjdPacOptions s;
  s.width = o.integer("width");
  s.depth = o.integer("depth");
  s.window = o.integer("window");
  s.path = o.choice("path") == "longest" ? SjdPacPath::Longest : SjdPacPath::First;
  const std::string& init = o.choice("init");
  s.init = init == "left" ? DraftInit::Left : init == "above" ? DraftInit::Above : DraftInit::Random;
  const int64_t tree = sjd_pac_tree_nodes(s.width, s.depth);
  if (tree > s.window)
    throw Error("sjd-pac: --width " + str(s.width) + " --depth " + str(s.depth) + " make a tree of " + str(tree) +
                " nodes with the root, more than --window " + str(s.window) + " (the nodes per forward)");
  return s;
}

StrategyDescriptor sjd_pac() {
  StrategyDescriptor d;
  d.name = "sjd-pac";
  d.order = 95;  // after the existing methods: listings that name the first few keep their order
  d.summary = "SJD-PAC: a small tree of guesses right after the last token, then a long Jacobi chain whose old "
              "guesses are kept while they still pass";
  d.reference = "Kang et al., CVPR 2026, SJD-PAC (Proactive Drafting and Adaptive Continuation); --path first "
                "ours (exact), --path longest the released code's rule";
  d.options = {
      OptionSpec::integer("width", 3, 1, kMaxWidth, "K: candidates per tree depth (the paper's README prefers 4)"),
      OptionSpec::integer("depth", 3, 1, kMaxDepth,
                          "D: tree levels with the root (the code's tree_depth): D - 1 positions get K candidates"),
      OptionSpec::integer("window", 64, 2, 1024,
                          "L: nodes per forward with the root (the code's max_num_new_tokens); the branch-0 path "
                          "continues as a chain until L nodes (the target runs up to L + D - 1 queries)"),
      OptionSpec::choice("path", "first", {"first", "longest"},
                         "first: descend into the first accepted candidate, extra candidates drawn from q' without "
                         "replacement (exact); longest: the released code's rule, the longest accepted path and "
                         "extra candidates from the residual (lossy)"),
      OptionSpec::choice("init", "random", {"random", "left", "above"},
                         "how a position entering the window is first drafted: uniform tokens with q uniform (the "
                         "code's; K distinct ones in the tree), or the token to its left or above it (q a point "
                         "mass, one candidate)"),
  };
  d.lossless = [](const OptionValues& o) { return o.choice("path") == "first"; };
  d.max_queries = [](const OptionValues& o, const GptConfig&) { return o.integer("window") + o.integer("depth") - 1; };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    return std::make_unique<SjdPacStrategy>(m, in, sjd_pac_options(o));
  };
  return d;
}

const RegisterStrategy kSjdPac(sjd_pac());

}  // namespace
}  // namespace vkspec
