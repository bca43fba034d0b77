// The draft tree's shapes (decoding/eagle_tree.h) without a device: the static shape's rank
// paths, the chain, and EAGLE-2's dynamic growth and cut on hand-made draft distributions.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "common/error.h"
#include "decoding/eagle_tree.h"

namespace vkspec {
namespace {

using Paths = std::vector<std::vector<int32_t>>;

TEST(eagle_tree, StaticPathsFollowThePriorParentsFirst) {
  // Cost sum(r + 1): 1: (0); 2: (1), (0,0); 3: (2), (0,1), (1,0), (0,0,0); cut at 6 nodes.
  EXPECT_EQ(eagle_static_paths(3, 3, 6), (Paths{{0}, {1}, {0, 0}, {2}, {0, 1}, {1, 0}}));
  EXPECT_EQ(eagle_static_paths(1, 4, 10), (Paths{{0}, {1}, {2}, {3}}));  // depth 1: the top 4 only
  EXPECT_EQ(eagle_static_paths(3, 1, 10), (Paths{{0}, {0, 0}, {0, 0, 0}}));
  const Paths p = eagle_static_paths(6, 10, 60);
  ASSERT_EQ(p.size(), 60u);
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i].size() == 1) continue;
    const std::vector<int32_t> parent(p[i].begin(), p[i].end() - 1);
    const auto at = std::find(p.begin(), p.end(), parent);
    ASSERT_NE(at, p.end()) << "path " << i << " has no parent";
    EXPECT_LT(at - p.begin(), static_cast<long>(i));
  }
}

// Sampled candidates are drawn on the GPU after the whole tree is recorded, so the builder must
// know every node from the shape alone, and select() must keep them all, breadth first by rank.
TEST(eagle_tree, ShapeChildrenBuildTheWholeStaticTreeWithoutTokens) {
  EagleTreeOptions o;
  o.kind = EagleTreeKind::Static;
  o.depth = 3;
  o.topk = 3;
  o.nodes = 6;  // paths (0) (1) (0,0) (2) (0,1) (1,0)
  DraftTreeBuilder b(o, 10);
  size_t levels = 0;
  b.add_shape_children(0);
  for (std::vector<int32_t> f = b.frontier(); !f.empty(); f = b.frontier(), ++levels)
    for (int32_t id : f) b.add_shape_children(id);
  EXPECT_EQ(levels, 1u) << "only depth-1 nodes have children in this shape";
  ASSERT_EQ(b.nodes().size(), 7u);
  const std::vector<int32_t> sel = b.select();
  ASSERT_EQ(sel.size(), 7u);
  std::vector<std::vector<int32_t>> paths;
  for (size_t i = 1; i < sel.size(); ++i) {
    std::vector<int32_t> p;
    for (int32_t n = sel[i]; n > 0; n = b.nodes()[static_cast<size_t>(n)].parent)
      p.insert(p.begin(), b.nodes()[static_cast<size_t>(n)].rank);
    paths.push_back(p);
    EXPECT_EQ(b.nodes()[static_cast<size_t>(sel[i])].token, 0u);
  }
  EXPECT_EQ(paths, (Paths{{0}, {1}, {2}, {0, 0}, {0, 1}, {1, 0}}));

  o.kind = EagleTreeKind::Chain;
  DraftTreeBuilder chain(o, 2);  // two positions left: the chain stops at depth 2
  chain.add_shape_children(0);
  for (std::vector<int32_t> f = chain.frontier(); !f.empty(); f = chain.frontier())
    for (int32_t id : f) chain.add_shape_children(id);
  EXPECT_EQ(chain.select(), (std::vector<int32_t>{0, 1, 2}));

  o.kind = EagleTreeKind::Dynamic;
  DraftTreeBuilder dynamic(o, 10);
  EXPECT_THROW(dynamic.add_shape_children(0), Error) << "a dynamic tree's shape depends on the tokens";
}

// A distribution over 6 tokens with the given probabilities (the rest 0).
std::vector<float> dist(std::vector<float> q) {
  q.resize(6, 0.0f);
  return q;
}

TEST(eagle_tree, ChainFollowsTheMostLikelyToken) {
  EagleTreeOptions o;
  o.kind = EagleTreeKind::Chain;
  o.depth = 3;
  o.topk = 4;
  o.nodes = 3;
  DraftTreeBuilder b(o, 10);
  EXPECT_EQ(b.frontier(), std::vector<int32_t>{0});
  const std::vector<float> q = dist({0.1f, 0.5f, 0.4f});
  b.add_children(0, q.data(), 6);
  ASSERT_EQ(b.nodes().size(), 2u);  // only rank 0 is in the shape
  EXPECT_EQ(b.nodes()[1].token, 1u);
  EXPECT_EQ(b.frontier(), std::vector<int32_t>{1});
  const std::vector<float> q2 = dist({0.0f, 0.0f, 0.2f, 0.7f});
  b.add_children(1, q2.data(), 6);
  EXPECT_EQ(b.frontier(), std::vector<int32_t>{2});
  b.add_children(2, q.data(), 6);
  EXPECT_TRUE(b.frontier().empty());
  EXPECT_EQ(b.select(), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(b.nodes()[2].token, 3u);
  EXPECT_NEAR(b.nodes()[3].value, 0.5 * 0.7 * 0.5, 1e-6);
}

TEST(eagle_tree, DynamicExpandsAndKeepsTheMostValuable) {
  EagleTreeOptions o;
  o.kind = EagleTreeKind::Dynamic;
  o.depth = 2;
  o.topk = 2;
  o.nodes = 3;
  DraftTreeBuilder b(o, 10);
  const std::vector<float> root = dist({0.6f, 0.3f, 0.1f});
  b.add_children(0, root.data(), 6);  // tokens 0 (0.6) and 1 (0.3)
  ASSERT_EQ(b.nodes().size(), 3u);
  EXPECT_EQ(b.frontier(), (std::vector<int32_t>{1, 2}));
  const std::vector<float> a = dist({0.0f, 0.0f, 0.0f, 0.9f, 0.1f}), c = dist({0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f});
  b.add_children(1, a.data(), 6);  // 0.54 (token 3), 0.06 (token 4)
  b.add_children(2, c.data(), 6);  // 0.30 (token 5): only one token has mass
  EXPECT_TRUE(b.frontier().empty());
  // Values: node1 0.6, node3 0.54, node2 0.3, node5 0.3, node4 0.06; the best three.
  const std::vector<int32_t> sel = b.select();
  EXPECT_EQ(sel, (std::vector<int32_t>{0, 1, 2, 3}));
  o.nodes = 2;  // a child never comes without its parent
  DraftTreeBuilder small(o, 10);
  small.add_children(0, root.data(), 6);
  small.add_children(1, a.data(), 6);
  small.add_children(2, c.data(), 6);
  EXPECT_EQ(small.select(), (std::vector<int32_t>{0, 1, 3}));
}

// A static level can expand more nodes than topk (the default shape's second level holds 15
// paths): eagle_max_frontier sizes the drafter's queries for the widest level the tree grows.
TEST(eagle_tree, FrontiersFitTheirBound) {
  for (const EagleTreeKind kind : {EagleTreeKind::Static, EagleTreeKind::Dynamic, EagleTreeKind::Chain}) {
    EagleTreeOptions o;
    o.kind = kind;
    DraftTreeBuilder b(o, 100);
    std::vector<float> q(40);
    for (size_t i = 0; i < q.size(); ++i) q[i] = 1.0f / static_cast<float>(i + 2);
    size_t widest = 0, expanded = 0;
    for (std::vector<int32_t> f = b.frontier(); !f.empty(); f = b.frontier()) {
      widest = std::max(widest, f.size());
      expanded += f.size();
      for (int32_t id : f) b.add_children(id, q.data(), 40);
    }
    EXPECT_EQ(static_cast<int64_t>(widest), eagle_max_frontier(o)) << eagle_tree_kind_name(kind);
    EXPECT_LE(static_cast<int64_t>(expanded), eagle_max_expanded(o)) << eagle_tree_kind_name(kind);
    EXPECT_EQ(static_cast<int64_t>(b.select().size()), 1 + (kind == EagleTreeKind::Chain ? o.depth : o.nodes));
    // Near the image's end the tree is cut, never widened.
    for (int64_t room = 1; room < o.depth; ++room) {
      DraftTreeBuilder end(o, room);
      for (std::vector<int32_t> f = end.frontier(); !f.empty(); f = end.frontier()) {
        EXPECT_LE(static_cast<int64_t>(f.size()), eagle_max_frontier(o))
            << eagle_tree_kind_name(kind) << " room " << room;
        for (int32_t id : f) end.add_children(id, q.data(), 40);
      }
    }
  }
}

TEST(eagle_tree, DepthStopsAtTheImageEnd) {
  EagleTreeOptions o;
  o.depth = 6;
  DraftTreeBuilder b(o, 1);
  EXPECT_EQ(b.depth(), 1);
  const std::vector<float> q = dist({0.5f, 0.5f});
  b.add_children(0, q.data(), 6);
  EXPECT_TRUE(b.frontier().empty());
  EXPECT_THROW(b.add_children(1, q.data(), 6), Error);
  EXPECT_THROW(parse_eagle_tree_kind("bushy"), Error);
}

}  // namespace
}  // namespace vkspec
