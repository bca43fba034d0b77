// LANTERN++ (decoding/lantern_pp_strategy.cpp) and the pieces it adds: the lantern rule's
// multiplicative --lambda budget, the code's rejection residual, the named static tree shapes.
// lambda = 1 moves no mass, so it is the exact rule token for token wherever the rule is used;
// a large lambda accepts more; lantern++ is `lantern --drafter eagle` with the paper's tree and
// rule; bad options are refused naming the option.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

#include "common/error.h"
#include "decoding/eagle_tree.h"
#include "decoding/strategy_registry.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using testing::by_name;
using testing::run_images;

class decoding_lantern_pp : public testing::VulkanTest {};

MethodOptions with(MethodOptions o, const MethodOptions& more) {
  o.insert(more.begin(), more.end());
  return o;
}

void expect_same_run(const testing::Sample& a, const testing::Sample& b, const std::string& what) {
  EXPECT_EQ(a.grids, b.grids) << what;
  EXPECT_EQ(a.nfe_per_image, b.nfe_per_image) << what;
}

// lambda = 1: the budget (lambda - 1) p(x) admits only neighbours without mass, p' = p, and the
// rejection residual keeps q (nothing was moved): the exact rule's tests with the same numbers.
TEST_F(decoding_lantern_pp, LambdaOneIsTheExactRule) {
  const MethodOptions one = {{"k", "8"}, {"lambda", "1"}};
  expect_same_run(run_images(ctx(), by_name("sjd"), {{"window", "4"}}, 5, 6),
                  run_images(ctx(), by_name("sjd"), with(one, {{"window", "4"}, {"accept", "lantern"}}), 5, 6), "sjd");
  expect_same_run(run_images(ctx(), by_name("sd"), {{"window", "3"}}, 5, 6),
                  run_images(ctx(), by_name("sd"), with(one, {{"window", "3"}, {"accept", "lantern"}}), 5, 6), "sd");
  const MethodOptions tree = {{"tree", "static"}, {"shape", "mc_sim_7b_63"}, {"candidates", "sampled"}};
  const testing::Sample eagle = run_images(ctx(), by_name("eagle"), tree, 5, 6);
  expect_same_run(eagle, run_images(ctx(), by_name("lantern"), with(with(one, tree), {{"drafter", "eagle"}}), 5, 6),
                  "lantern --drafter eagle");
  expect_same_run(eagle, run_images(ctx(), by_name("lantern++"), one, 5, 6), "lantern++");
}

// The method's events hold (run_images checks each step), and relaxing accepts more than lambda 1.
TEST_F(decoding_lantern_pp, RunsAndAcceptsMoreThanTheExactTest) {
  const testing::Sample exact = run_images(ctx(), by_name("lantern++"), {{"lambda", "1"}}, 30, 8, true);
  const testing::Sample relaxed = run_images(ctx(), by_name("lantern++"), {{"lambda", "50"}, {"k", "16"}}, 30, 8, true);
  EXPECT_LT(relaxed.nfe_per_image, exact.nfe_per_image);
  EXPECT_NE(relaxed.grids, exact.grids);
  // The other named shape and ours run too.
  run_images(ctx(), by_name("lantern++"), {{"shape", "naive_extend_57"}}, 30, 2, true);
  run_images(ctx(), by_name("lantern++"), {{"shape", "cost"}, {"depth", "3"}, {"topk", "2"}, {"nodes", "6"}}, 30, 2,
             true);
}

void expect_error(const std::string& method, const MethodOptions& options, const std::string& fragment) {
  try {
    run_images(testing::test_context(), by_name(method), options, 0, 1);
    ADD_FAILURE() << method << ": expected an error mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST_F(decoding_lantern_pp, BadOptionsAreRefused) {
  expect_error("lantern++", {{"lambda", "0.5"}}, "--lambda must be in [1,");
  expect_error("lantern++", {{"depth", "3"}}, "--depth is fixed by --shape mc_sim_7b_63");
  expect_error("lantern++", {{"delta", "0.1"}}, "lantern++ has no option --delta");
  expect_error("lantern++", {{"tree", "dynamic"}}, "lantern++ has no option --tree");
  expect_error("lantern++", {{"shape", "bushy"}}, "--shape must be one of cost, mc_sim_7b_63, naive_extend_57");
  expect_error("lantern", {{"lambda", "0.5"}}, "--lambda must be >= 1");
  expect_error("lantern", {{"lambda", "5"}, {"delta", "0.1"}}, "--delta and --lambda are two budgets");
  expect_error("sjd", {{"lambda", "5"}}, "--lambda belongs to --accept lantern");
  expect_error("eagle", {{"shape", "mc_sim_7b_63"}}, "--shape mc_sim_7b_63 needs --tree static");
  expect_error("lantern", {{"shape", "mc_sim_7b_63"}}, "--shape applies to --drafter eagle only");
  EXPECT_FALSE(find_strategy("lantern++").lossless_for({}));
  EXPECT_TRUE(find_strategy("lantern++").needs_for({}).eagle);
  EXPECT_TRUE(find_strategy("lantern++").needs_for({}).neighbours);
  EXPECT_EQ(find_strategy("lantern++").needs_for({{"metric", "cosine"}}).neighbour_metric, NeighbourMetric::Cosine);
}

// The released code's lists (drafters/choices.py): sizes, depth, parents before children.
TEST(eagle_tree_shapes, NamedShapesAreTheCodesLists) {
  for (const auto& [shape, nodes, topk] :
       {std::tuple{EagleShape::McSim7b63, 25, 4}, std::tuple{EagleShape::NaiveExtend57, 57, 5}}) {
    const auto& paths = eagle_named_paths(shape);
    const ShapeExtent e = eagle_shape_extent(paths);
    EXPECT_EQ(e.nodes, nodes) << eagle_shape_name(shape);
    EXPECT_EQ(e.depth, 5) << eagle_shape_name(shape);
    EXPECT_EQ(e.topk, topk) << eagle_shape_name(shape);
    for (size_t i = 0; i < paths.size(); ++i) {
      if (paths[i].size() < 2) continue;
      const std::vector<int32_t> parent(paths[i].begin(), paths[i].end() - 1);
      EXPECT_NE(std::find(paths.begin(), paths.begin() + static_cast<std::ptrdiff_t>(i), parent),
                paths.begin() + static_cast<std::ptrdiff_t>(i))
          << eagle_shape_name(shape) << " path " << i << " comes before its parent";
    }
    EagleTreeOptions o;
    o.kind = EagleTreeKind::Static;
    o.shape = shape;
    o.depth = e.depth;
    o.topk = e.topk;
    o.nodes = e.nodes;
    DraftTreeBuilder b(o, 100);
    for (std::vector<int32_t> f = b.frontier(); !f.empty(); f = b.frontier())
      for (int32_t id : f) b.add_shape_children(id);
    EXPECT_EQ(static_cast<int64_t>(b.select().size()), 1 + e.nodes) << eagle_shape_name(shape);
  }
  EXPECT_EQ(eagle_named_paths(EagleShape::McSim7b63)[4], (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(eagle_named_paths(EagleShape::NaiveExtend57).back(), (std::vector<int32_t>{0, 0, 2, 0, 0}));
  EXPECT_THROW(eagle_named_paths(EagleShape::Cost), Error);
  EXPECT_THROW(parse_eagle_shape("bushy"), Error);
}

}  // namespace
}  // namespace vkspec
