#include "decoding/sjd_pac_image.h"

#include <algorithm>

#include "common/error.h"
#include "decoding/point_mass.h"
#include "decoding/sjd_pac_shape.h"
#include "engine/ops/det_math.h"
#include "engine/ops/speculative.h"

namespace vkspec {

SjdPacImage::SjdPacImage(const SjdPacOptions& opt, const GptConfig& cfg, uint64_t seed, Store store)
    : opt_(opt),
      cls_(cfg.cls_token_num),
      N_(cfg.image_tokens()),
      V_(cfg.vocab_size),
      W_(cfg.grid_size),
      seq_len_(cfg.seq_len()),
      seed_(seed),
      store_(store),
      cand_(static_cast<size_t>(cfg.image_tokens())) {}

SjdPacTensors::SjdPacTensors(Context& ctx, const SjdPacOptions& opt, const GptConfig& cfg, int64_t images)
    : N_(cfg.image_tokens()),
      extra_(sjd_pac_extra_rows(opt)),
      q_base_(ctx.tensor(DType::F32, {images * N_, cfg.vocab_size}, "sjd-pac draft distributions")),
      multihot_(ctx.tensor(DType::F32, {images * extra_, cfg.vocab_size}, "sjd-pac removed candidates")),
      q_extra_(ctx.tensor(DType::F32, {images * extra_, cfg.vocab_size}, "sjd-pac extra candidates' distributions")) {}

SjdPacImage::Store SjdPacTensors::store(int64_t image) const {
  return {&q_base_, image * N_, &multihot_, &q_extra_, image * extra_};
}

std::vector<uint32_t> SjdPacImage::distinct_uniform(int64_t n, int64_t count) const {
  // Draw k picks uniformly among the V - k tokens not yet taken, so the k-th is a sample of
  // uniform-with-the-earlier-removed, the q^(k) the tree tests it with.
  std::vector<uint32_t> taken;
  for (int64_t k = 0; k < count; ++k) {
    const uint32_t bits = philox::bits(seed_, static_cast<uint32_t>(n),
                                       philox::purpose_word(philox::Purpose::DraftInit), static_cast<uint32_t>(k));
    uint64_t pick = (static_cast<uint64_t>(bits) * static_cast<uint64_t>(V_ - k)) >> 32;
    uint32_t tok = 0;
    for (;; ++tok) {
      if (std::find(taken.begin(), taken.end(), tok) != taken.end()) continue;
      if (pick-- == 0) break;
    }
    taken.push_back(tok);
  }
  return taken;
}

void SjdPacImage::initialise(CommandStream& s, const std::vector<int32_t>& grid, int64_t committed, int64_t end,
                             int64_t tree_end) {
  std::vector<std::pair<int64_t, uint32_t>> point_mass;
  for (int64_t n = ready_; n < end; ++n) {
    DraftInit how = opt_.init;
    if (how == DraftInit::Above && n < W_) how = DraftInit::Left;  // the first row has nothing above
    if (how == DraftInit::Left && n == 0) how = DraftInit::Random;
    if (how != DraftInit::Random) {
      const int64_t from = how == DraftInit::Left ? n - 1 : n - W_;
      const uint32_t tok = from < committed ? static_cast<uint32_t>(grid[static_cast<size_t>(from)])
                                            : cand_[static_cast<size_t>(from)][0];
      cand_[static_cast<size_t>(n)] = {tok};
      point_mass.push_back({store_.q_row + n, tok});
      continue;
    }
    cand_[static_cast<size_t>(n)] = distinct_uniform(n, n < tree_end ? opt_.width : 1);
    s.fill(q_base(n), det::float_bits(1.0f / static_cast<float>(V_)));
  }
  record_point_masses(s, *store_.q_base, point_mass);
  ready_ = std::max(ready_, end);
}

std::vector<SjdPacImage::Node> SjdPacImage::build_tree(CommandStream& s, const std::vector<int32_t>& grid, int64_t c) {
  const int64_t left = N_ - c, depths = std::min(opt_.depth - 1, left);
  initialise(s, grid, c, c + depths, c + depths);
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
  initialise(s, grid, c, c + depths + chain, c + depths);
  const std::vector<SjdPacNode> shape = sjd_pac_shape(pools, chain);
  std::vector<Node> nodes = {{-1, c - 1, c > 0 ? grid[static_cast<size_t>(c - 1)] : 0, cls_ + c - 1, -1, true, false}};
  int64_t scratch = seq_len_;
  for (size_t i = 1; i < shape.size(); ++i) {
    const SjdPacNode& sh = shape[i];
    const int64_t pos = c + sh.depth - 1;
    const uint32_t tok = cand_[static_cast<size_t>(pos)][static_cast<size_t>(sh.pick)];
    nodes.push_back({sh.parent, pos, static_cast<int32_t>(tok), sh.canonical ? cls_ + pos : scratch++, sh.pick,
                     sh.canonical, sh.first_pick});
  }
  return nodes;
}

void SjdPacImage::record_rows(CommandStream& s, const std::vector<Node>& nodes, int64_t c, SjdPacStep& step,
                              int64_t first, uint32_t round) {
  std::vector<CopyRegion> pending;
  for (const auto& [row, n] : pending_) pending.push_back({step.probs().view().rows(row, 1), q_base(n)});
  s.copy(pending);
  pending_.clear();
  record_candidate_rows(s, nodes, c, step.q_tree().view().rows(first, static_cast<int64_t>(nodes.size())));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    SjdPacStep::Row& r = step.row(first + static_cast<int64_t>(i));
    const TreeTestPositions tp = tree_test_positions(n, i == 0, N_);
    r = {n.parent < 0 ? -1 : static_cast<int32_t>(first + n.parent),
         i > 0 ? static_cast<uint32_t>(n.token) : 0u,
         tp.accept,
         tp.final_draw,
         seed_,
         round,
         -1};
    if (i > 0 && n.pick == 0) step.row(first + n.parent).first_child = first + static_cast<int64_t>(i);
  }
}

void SjdPacImage::record_candidate_rows(CommandStream& s, const std::vector<Node>& nodes, int64_t c,
                                        const TensorView& q_tree) {
  const int64_t K = opt_.width, D1 = opt_.depth - 1, M = static_cast<int64_t>(nodes.size());
  const int64_t depths = std::min(opt_.depth - 1, N_ - c), x0 = store_.extra_row;
  if (K > 1 && depths > 0) {
    // q^(k) of position c + t = q' with its candidates 0 .. k - 1 zeroed and renormalised: the
    // residual norm(max(q' - h, 0)) against the row h with 1 at each of them.
    std::vector<std::pair<int64_t, uint32_t>> hot;
    for (int64_t k = 1; k < K; ++k)
      for (int64_t t = 0; t < depths; ++t) {
        const std::vector<uint32_t>& cn = cand_[static_cast<size_t>(c + t)];
        for (int64_t i = 0; i < k && i < static_cast<int64_t>(cn.size()); ++i)
          hot.push_back({x0 + (k - 1) * D1 + t, cn[static_cast<size_t>(i)]});
      }
    record_point_masses(s, *store_.multihot, hot);
    for (int64_t k = 1; k < K; ++k)
      ops::residual_distribution(s, store_.q_base->view().rows(store_.q_row + c, depths),
                                 store_.multihot->view().rows(x0 + (k - 1) * D1, depths),
                                 store_.q_extra->view().rows(x0 + (k - 1) * D1, depths));
  }
  std::vector<CopyRegion> rows;
  for (int64_t i = 1; i < M; ++i) {
    const Node& n = nodes[static_cast<size_t>(i)];
    const TensorView src =
        n.pick == 0 ? q_base(n.position) : store_.q_extra->view().rows(x0 + (n.pick - 1) * D1 + n.position - c, 1);
    rows.push_back({src, q_tree.rows(i, 1)});
  }
  s.copy(rows);
}

AcceptedPath SjdPacImage::choose_path(const std::vector<Node>& nodes, const std::vector<uint32_t>& accept) const {
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

int64_t SjdPacImage::commit_path(const std::vector<Node>& nodes, const AcceptedPath& a, const SjdPacReadback& r,
                                 std::vector<int32_t>& grid, StepEvent& e, const Check& check) {
  const int64_t M = static_cast<int64_t>(nodes.size());
  for (int64_t i = 1; i < M; ++i) {
    if (!nodes[static_cast<size_t>(i)].shown) continue;  // a candidate repeated under another parent
    e.proposed.push_back(static_cast<int32_t>(nodes[static_cast<size_t>(i)].position));
    e.proposed_tokens.push_back(nodes[static_cast<size_t>(i)].token);
  }
  repairs_.clear();
  for (size_t i = 1; i < a.path.size(); ++i) {
    const Node& nd = nodes[static_cast<size_t>(a.path[i])];
    grid[static_cast<size_t>(nd.position)] = nd.token;
    e.accepted.push_back(static_cast<int32_t>(nd.position));
    if (!nd.canonical) repairs_.push_back(nd.position);
  }
  const int32_t end = a.path.back();
  const int64_t f = nodes[static_cast<size_t>(end)].position + 1;
  if (f < N_) {
    grid[static_cast<size_t>(f)] = check(r.final_token[static_cast<size_t>(end)], f);
    if (a.had_children) {
      e.rejected.push_back(static_cast<int32_t>(f));
      e.resampled.push_back(static_cast<int32_t>(f));
    } else {
      e.accepted.push_back(static_cast<int32_t>(f));  // the bonus: a sample of the last node's p
    }
  }
  return f;
}

void SjdPacImage::commit(const std::vector<Node>& nodes, const SjdPacReadback& r, int64_t first,
                         std::vector<int32_t>& grid, int64_t& committed, StepEvent& e, const Check& check) {
  const AcceptedPath a = choose_path(nodes, r.accept);
  const int64_t f = commit_path(nodes, a, r, grid, e, check);
  committed = std::min(f + 1, N_);
  if (f + 1 < N_) continue_window(nodes, a, r, f, first, committed, check);
  e.groups = tree_and_chain(nodes);
}

std::vector<uint32_t> SjdPacImage::next_candidates(const std::vector<Node>& nodes, const std::vector<int32_t>& kids,
                                                   int32_t P, const SjdPacReadback& r, bool tree_position) const {
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
  return c;
}

void SjdPacImage::continue_window(const std::vector<Node>& nodes, const AcceptedPath& a, const SjdPacReadback& r,
                                  int64_t f, int64_t first, int64_t committed, const Check& check) {
  const int64_t M = static_cast<int64_t>(nodes.size());
  std::vector<std::vector<int32_t>> kids(static_cast<size_t>(M));
  for (int64_t i = 1; i < M; ++i)
    kids[static_cast<size_t>(nodes[static_cast<size_t>(i)].parent)].push_back(static_cast<int32_t>(i));
  // The node whose row predicts each position: the main path's, replaced along the committed path
  // and the branch-0 descent below its end (context closer to what was committed). Any node
  // predicting j is exact: its row depends only on tokens before j.
  std::vector<int32_t> pred(static_cast<size_t>(N_ + 1), -1);
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
  const int64_t end = std::min(last, N_ - 1);
  for (int64_t j = f + 1; j <= end; ++j) {
    const int32_t P = pred[static_cast<size_t>(j)];
    if (P < 0) throw Error("sjd-pac: no node predicts position " + std::to_string(j));
    cand_[static_cast<size_t>(j)] = next_candidates(nodes, kids[static_cast<size_t>(P)], P, r, j < f + opt_.depth);
    for (uint32_t x : cand_[static_cast<size_t>(j)]) check(x, j);
    pending_.push_back({first + P, j});
  }
  ready_ = std::max(committed, end + 1);
}

std::vector<std::vector<int32_t>> SjdPacImage::tree_and_chain(const std::vector<Node>& nodes) {
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

}  // namespace vkspec
