#include "decoding/eagle_tree.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

#include "common/error.h"

namespace vkspec {

EagleTreeKind parse_eagle_tree_kind(const std::string& name) {
  if (name == "dynamic") return EagleTreeKind::Dynamic;
  if (name == "static") return EagleTreeKind::Static;
  if (name == "chain") return EagleTreeKind::Chain;
  throw Error("unknown draft tree '" + name + "' (expected dynamic, static or chain)");
}

const char* eagle_tree_kind_name(EagleTreeKind k) {
  switch (k) {
    case EagleTreeKind::Dynamic: return "dynamic";
    case EagleTreeKind::Static: return "static";
    case EagleTreeKind::Chain: return "chain";
  }
  return "?";
}

std::vector<std::vector<int32_t>> eagle_static_paths(int64_t depth, int64_t topk, int64_t nodes) {
  // Paths by cost sum(r_i + 1): every path of cost s extends a path of smaller cost, so growing
  // cost by cost lists parents before children.
  std::vector<std::vector<int32_t>> out;
  for (int64_t cost = 1; static_cast<int64_t>(out.size()) < nodes && cost <= depth * topk; ++cost) {
    // Paths of exactly this cost: the empty path or a kept one, extended by rank r.
    std::vector<std::vector<int32_t>> level, all = {{}};
    all.insert(all.end(), out.begin(), out.end());
    for (const std::vector<int32_t>& p : all) {
      if (static_cast<int64_t>(p.size()) >= depth) continue;
      int64_t c = 0;
      for (int32_t r : p) c += r + 1;
      const int64_t r = cost - c - 1;
      if (r < 0 || r >= topk) continue;
      std::vector<int32_t> q = p;
      q.push_back(static_cast<int32_t>(r));
      level.push_back(std::move(q));
    }
    std::sort(level.begin(), level.end(),
              [](const auto& a, const auto& b) { return a.size() != b.size() ? a.size() < b.size() : a < b; });
    for (auto& p : level) {
      if (static_cast<int64_t>(out.size()) == nodes) break;
      out.push_back(std::move(p));
    }
  }
  return out;
}

std::vector<std::vector<int32_t>> eagle_shape_paths(const EagleTreeOptions& o) {
  if (o.shape == EagleShape::Cost) return eagle_static_paths(o.depth, o.topk, o.nodes);
  return eagle_named_paths(o.shape);
}

int64_t eagle_max_frontier(const EagleTreeOptions& o) {
  if (o.kind == EagleTreeKind::Dynamic) return o.topk;
  if (o.kind == EagleTreeKind::Chain) return 1;
  // A level expands the paths of its depth that a longer path continues.
  const std::vector<std::vector<int32_t>> paths = eagle_shape_paths(o);
  std::vector<std::set<std::vector<int32_t>>> continued(static_cast<size_t>(o.depth + 1));
  for (const std::vector<int32_t>& p : paths)
    if (p.size() > 1) continued[p.size() - 1].insert(std::vector<int32_t>(p.begin(), p.end() - 1));
  size_t widest = 1;
  for (const auto& c : continued) widest = std::max(widest, c.size());
  return static_cast<int64_t>(widest);
}

int64_t eagle_max_expanded(const EagleTreeOptions& o) {
  if (o.kind == EagleTreeKind::Dynamic) return 1 + o.depth * o.topk;
  if (o.kind == EagleTreeKind::Chain) return o.depth;
  // The root and every path a longer one continues.
  std::set<std::vector<int32_t>> continued;
  for (const std::vector<int32_t>& p : eagle_shape_paths(o))
    if (p.size() > 1) continued.insert(std::vector<int32_t>(p.begin(), p.end() - 1));
  return 1 + static_cast<int64_t>(continued.size());
}

DraftTreeBuilder::DraftTreeBuilder(const EagleTreeOptions& options, int64_t max_depth)
    : o_(options), depth_(std::max<int64_t>(0, std::min(options.depth, max_depth))) {
  if (o_.depth < 1 || o_.topk < 1 || o_.nodes < 1) throw Error("draft tree: depth, topk and nodes must be >= 1");
  nodes_.push_back(DraftTreeNode{});
  // The shape is the full-depth one cut at the image's end (recomputing it for fewer levels would
  // spread the same node budget wider than the buffers sized for the full shape).
  if (o_.kind == EagleTreeKind::Static)
    for (std::vector<int32_t>& p : eagle_shape_paths(o_))
      if (static_cast<int64_t>(p.size()) <= depth_) shape_.push_back(std::move(p));
  if (o_.kind == EagleTreeKind::Chain)
    for (int64_t d = 1; d <= std::min(depth_, o_.nodes); ++d)
      shape_.push_back(std::vector<int32_t>(static_cast<size_t>(d), 0));
}

std::vector<int32_t> DraftTreeBuilder::path_of(int32_t node) const {
  std::vector<int32_t> p;
  for (int32_t n = node; n > 0; n = nodes_[static_cast<size_t>(n)].parent)
    p.push_back(nodes_[static_cast<size_t>(n)].rank);
  std::reverse(p.begin(), p.end());
  return p;
}

bool DraftTreeBuilder::in_static_shape(int32_t parent, int32_t rank) const {
  std::vector<int32_t> p = path_of(parent);
  p.push_back(rank);
  return std::find(shape_.begin(), shape_.end(), p) != shape_.end();
}

void DraftTreeBuilder::add_children(int32_t parent, const float* q, int64_t V) {
  std::vector<uint32_t> ids(static_cast<size_t>(V));
  std::iota(ids.begin(), ids.end(), 0u);
  const int64_t k = std::min<int64_t>(o_.topk, V);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                    [&](uint32_t a, uint32_t b) { return q[a] != q[b] ? q[a] > q[b] : a < b; });
  std::vector<float> top(static_cast<size_t>(k));
  for (int64_t r = 0; r < k; ++r) top[static_cast<size_t>(r)] = q[ids[static_cast<size_t>(r)]];
  add_children(parent, ids.data(), top.data(), k);
}

void DraftTreeBuilder::add_children(int32_t parent, const uint32_t* tokens, const float* q, int64_t k) {
  if (parent < 0 || parent >= static_cast<int32_t>(nodes_.size()))
    throw Error("draft tree: no node " + std::to_string(parent));
  const DraftTreeNode pn = nodes_[static_cast<size_t>(parent)];
  if (pn.depth >= depth_) throw Error("draft tree: node " + std::to_string(parent) + " is on the last level");
  for (int64_t r = 0; r < std::min(k, o_.topk); ++r) {
    if (!(q[r] > 0.0f)) break;
    if (o_.kind != EagleTreeKind::Dynamic && !in_static_shape(parent, static_cast<int32_t>(r))) continue;
    DraftTreeNode n;
    n.parent = parent;
    n.depth = pn.depth + 1;
    n.rank = static_cast<int32_t>(r);
    n.token = tokens[r];
    const float v = pn.value * q[r];
    n.value = v >= std::numeric_limits<float>::min() ? v : 0.0f;
    nodes_.push_back(n);
  }
  // The next level is the one below the parent's, even when it received no children.
  level_ = std::max(level_, pn.depth + 1);
}

int64_t DraftTreeBuilder::shape_children(int32_t parent) const {
  int64_t n = 0;
  while (in_static_shape(parent, static_cast<int32_t>(n))) ++n;
  return n;
}

void DraftTreeBuilder::add_shape_children(int32_t parent) {
  if (o_.kind == EagleTreeKind::Dynamic)
    throw Error("draft tree: sampled candidates need a static or chain shape (a dynamic tree would choose among "
                "the samples by their values, which biases them)");
  if (parent < 0 || parent >= static_cast<int32_t>(nodes_.size()))
    throw Error("draft tree: no node " + std::to_string(parent));
  const DraftTreeNode pn = nodes_[static_cast<size_t>(parent)];
  if (pn.depth >= depth_) throw Error("draft tree: node " + std::to_string(parent) + " is on the last level");
  const int64_t n = shape_children(parent);
  for (int64_t r = 0; r < n; ++r) {
    DraftTreeNode c;
    c.parent = parent;
    c.depth = pn.depth + 1;
    c.rank = static_cast<int32_t>(r);
    c.token = 0;
    c.value = pn.value;
    nodes_.push_back(c);
  }
  level_ = std::max(level_, pn.depth + 1);
}

std::vector<int32_t> DraftTreeBuilder::frontier() const {
  std::vector<int32_t> f;
  if (level_ >= depth_) return f;
  if (level_ == 0) return {0};
  for (int32_t i = 0; i < static_cast<int32_t>(nodes_.size()); ++i) {
    const DraftTreeNode& n = nodes_[static_cast<size_t>(i)];
    if (n.depth != level_) continue;
    if (o_.kind == EagleTreeKind::Dynamic) {
      f.push_back(i);
      continue;
    }
    // Static shapes: expand the nodes some longer path continues.
    const std::vector<int32_t> p = path_of(i);
    for (const std::vector<int32_t>& s : shape_)
      if (s.size() > p.size() && std::equal(p.begin(), p.end(), s.begin())) {
        f.push_back(i);
        break;
      }
  }
  if (o_.kind == EagleTreeKind::Dynamic) {
    std::stable_sort(f.begin(), f.end(), [&](int32_t a, int32_t b) {
      return nodes_[static_cast<size_t>(a)].value > nodes_[static_cast<size_t>(b)].value;
    });
    if (static_cast<int64_t>(f.size()) > o_.topk) f.resize(static_cast<size_t>(o_.topk));
  }
  return f;
}

std::vector<int32_t> DraftTreeBuilder::select() const {
  const int32_t n = static_cast<int32_t>(nodes_.size());
  std::vector<int32_t> order(static_cast<size_t>(std::max(n - 1, 0)));
  std::iota(order.begin(), order.end(), 1);
  // Highest value first; ties to the shallower, then the earlier node (parents were made first).
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const DraftTreeNode &x = nodes_[static_cast<size_t>(a)], &y = nodes_[static_cast<size_t>(b)];
    if (x.value != y.value) return x.value > y.value;
    return x.depth < y.depth;
  });
  std::set<int32_t> kept;
  for (int32_t i : order) {
    if (static_cast<int64_t>(kept.size()) >= o_.nodes) break;
    std::vector<int32_t> chain;  // i and its ancestors not kept yet
    for (int32_t a = i; a > 0 && !kept.count(a); a = nodes_[static_cast<size_t>(a)].parent) chain.push_back(a);
    if (static_cast<int64_t>(kept.size() + chain.size()) > o_.nodes) continue;
    kept.insert(chain.begin(), chain.end());
  }
  // Breadth first: by depth, then the parent's place in the output, then rank.
  std::vector<int32_t> out = {0};
  std::vector<int32_t> place(static_cast<size_t>(n), -1);
  place[0] = 0;
  for (int32_t d = 1; d <= depth_; ++d) {
    std::vector<int32_t> level;
    for (int32_t i : kept)
      if (nodes_[static_cast<size_t>(i)].depth == d) level.push_back(i);
    std::sort(level.begin(), level.end(), [&](int32_t a, int32_t b) {
      const DraftTreeNode &x = nodes_[static_cast<size_t>(a)], &y = nodes_[static_cast<size_t>(b)];
      const int32_t px = place[static_cast<size_t>(x.parent)], py = place[static_cast<size_t>(y.parent)];
      return px != py ? px < py : x.rank < y.rank;
    });
    for (int32_t i : level) {
      place[static_cast<size_t>(i)] = static_cast<int32_t>(out.size());
      out.push_back(i);
    }
  }
  return out;
}

}  // namespace vkspec
