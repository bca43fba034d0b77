// The decoding strategies' contract beyond the statistics (test_decoding_lossless.cpp): seeded runs
// are reproducible, options are checked with messages that name them, windows larger than the
// image work, profiling reports device time, and a drafter identical to the target has every
// draft accepted.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "decoding/strategy.h"
#include "eval/sample_set.h"
#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using testing::by_name;
using testing::run_images;
using testing::tiny_models;

class decoding_strategies : public testing::VulkanTest {};

const std::vector<std::pair<std::string, MethodOptions>>& configurations() {
  static const std::vector<std::pair<std::string, MethodOptions>> c = {
      {"ar", {}},
      {"sjd", {{"window", "4"}}},
      {"scd-mc", {{"window", "5"}, {"init", "left"}}},
      {"scd-gs", {{"window", "3"}, {"init", "random"}}},
      {"sd", {{"window", "2"}}},
      {"lantern", {{"window", "3"}, {"delta", "0.3"}, {"k", "4"}}},
      {"zipar", {{"window", "1"}}},
      {"pjd", {{"window", "3"}, {"lag", "1"}}},
      {"hawk", {{"depth", "3"}}},
      {"ssd", {}},
      {"ssd", {{"head-kind", "token"}, {"block-rows", "0"}}},
      {"ssd", {{"correct", "coupled"}}},
      {"eagle", {{"depth", "3"}, {"topk", "3"}, {"nodes", "8"}}},
      {"eagle", {{"tree", "chain"}, {"depth", "2"}}},
      {"eagle", {{"tree", "chain"}, {"candidates", "sampled"}, {"depth", "3"}}},
      {"lantern", {{"drafter", "eagle"}, {"tree", "static"}, {"depth", "3"}, {"topk", "2"}, {"nodes", "6"}}},
      {"ssd-coupled", {{"rows", "1"}, {"rounds", "2"}}},
      {"scd-mc", {{"window", "4"}, {"init", "heads"}}}};
  return c;
}

void expect_same_events(const std::vector<StepEvent>& a, const std::vector<StepEvent>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].proposed_tokens, b[i].proposed_tokens) << what << " step " << i;
    EXPECT_EQ(a[i].accepted, b[i].accepted) << what << " step " << i;
    EXPECT_EQ(a[i].rejected, b[i].rejected) << what << " step " << i;
    EXPECT_EQ(a[i].resampled, b[i].resampled) << what << " step " << i;
  }
}

TEST_F(decoding_strategies, SameSeedSameTokens) {
  for (const auto& [method, options] : configurations()) {
    const testing::Sample a = run_images(ctx(), by_name(method), options, 7, 8, true);
    const testing::Sample b = run_images(ctx(), by_name(method), options, 7, 8, true);
    const testing::Sample other = run_images(ctx(), by_name(method), options, 100, 8);
    EXPECT_EQ(a.grids, b.grids) << method;
    EXPECT_NE(a.grids, other.grids) << method << ": different seeds gave the same 8 images";
    for (size_t i = 0; i < a.events.size(); ++i) expect_same_events(a.events[i], b.events[i], method);
  }
}

// LANTERN on EAGLE's tree relaxes nothing at delta = 0: the same tests with the same random
// numbers, so the same images as the exact `eagle`; at delta = 1 it accepts more.
TEST_F(decoding_strategies, LanternOnTheEagleTreeAtDeltaZeroIsEagle) {
  const MethodOptions tree = {{"depth", "3"}, {"topk", "3"}, {"nodes", "8"}};
  MethodOptions relaxed = tree;
  relaxed["drafter"] = "eagle";
  relaxed["k"] = "4";
  relaxed["delta"] = "0";
  const testing::Sample exact = run_images(ctx(), by_name("eagle"), tree, 11, 16);
  const testing::Sample zero = run_images(ctx(), by_name("lantern"), relaxed, 11, 16);
  EXPECT_EQ(exact.grids, zero.grids);
  relaxed["delta"] = "1";
  const testing::Sample one = run_images(ctx(), by_name("lantern"), relaxed, 11, 16);
  EXPECT_LT(one.nfe_per_image, exact.nfe_per_image);
}

// ar with several forwards per submit (each fed the previous sample by a device copy) draws the
// same tokens with the same forwards, whatever K leaves over at the image's end.
TEST_F(decoding_strategies, ArTokensPerSubmitGivesTheSameTokens) {
  const testing::Sample one = run_images(ctx(), by_name("ar"), {}, 3, 5);
  const testing::Sample seven = run_images(ctx(), by_name("ar"), {{"tokens-per-submit", "7"}}, 3, 5);
  EXPECT_EQ(one.grids, seven.grids);
  EXPECT_EQ(one.nfe_per_image, seven.nfe_per_image);
}

TEST_F(decoding_strategies, WindowLargerThanTheImage) {
  for (const std::string method : {"sjd", "scd-mc", "scd-gs", "sd"}) {
    const testing::Sample s = run_images(ctx(), by_name(method), {{"window", "16"}}, 3, 4);
    EXPECT_LE(s.nfe_per_image, static_cast<double>(testing::kTinyGrid * testing::kTinyGrid)) << method;
  }
}

// Device time is split by what it was for: the stages add up to the step's time, and each method
// spends it on the models it runs (sd's drafter, hawk's heads, counted in head_forwards); a step
// that submits several times (eagle's tree, grown level by level) reports all of its submits.
TEST_F(decoding_strategies, ProfiledStepsReportDeviceTime) {
  if (!ctx().caps().timestamps) GTEST_SKIP() << "the queue has no timestamps";
  for (const std::string method : {"sjd", "sd", "hawk", "eagle"}) {
    StrategyInputs in;
    in.condition = std::make_shared<ClassLabel>(0);
    in.sampler = testing::tiny_settings();
    in.profile = true;
    if (method == "eagle") in.options = {{"depth", "3"}, {"topk", "3"}, {"nodes", "8"}};
    const auto s = make_strategy(method, tiny_models(ctx()).set, in);
    const StepEvent first = s->step();  // every command has a stage, those before the first forward too
    EXPECT_EQ(first.device_ms_by_stage.count(""), 0u) << method;
    const StepEvent e = s->step();  // hawk's heads run from its second step
    EXPECT_GT(e.device_ms, 0.0) << method;
    double sum = 0;
    for (const auto& [stage_name, ms] : e.device_ms_by_stage) sum += ms;
    EXPECT_NEAR(sum, e.device_ms, 1e-6 * e.device_ms) << method;
    // ... and the kernels add up to their stage's time (what bench --profile's kernel table splits).
    std::map<std::string, double> kernel_sum;
    for (const auto& [key, t] : e.device_ms_by_kernel) {
      EXPECT_GT(t.calls, 0) << method << " " << key.first << " " << key.second;
      kernel_sum[key.first] += t.ms;
    }
    EXPECT_EQ(kernel_sum.size(), e.device_ms_by_stage.size()) << method;
    for (const auto& [stage_name, ms] : e.device_ms_by_stage)
      EXPECT_NEAR(kernel_sum[stage_name], ms, 1e-6 * ms) << method << " " << stage_name;
    EXPECT_GT(e.device_ms_by_stage.count(stage::kTarget) ? e.device_ms_by_stage.at(stage::kTarget) : 0.0, 0.0)
        << method;
    if (method == "sd" || method == "eagle") {
      EXPECT_GT(e.device_ms_by_stage.count(stage::kDrafter), 0u) << method;
    }
    if (method == "eagle") {
      EXPECT_EQ(e.draft_forwards, 3) << "the catch-up and two levels";
    }
    if (method == "hawk") {
      EXPECT_GT(e.device_ms_by_stage.count(stage::kHeads), 0u);
      EXPECT_EQ(e.head_forwards, 1);
    }
  }
}

// The drafter's and the target's distributions then agree to rounding, so no draft is rejected;
// every step but the last commits its drafts plus the target's next token, which exercises the
// drafter catching up on two tokens at the start of each step.
TEST_F(decoding_strategies, IdenticalDrafterAcceptsEverything) {
  ModelSet same = tiny_models(ctx()).set;
  same.drafter = same.target;
  const testing::Factory sd = [&same](const ModelSet&, const StrategyInputs& in) -> std::unique_ptr<Strategy> {
    return make_strategy("sd", same, in);
  };
  const testing::Sample s = run_images(ctx(), sd, {{"window", "3"}}, 11, 10, true);
  for (const auto& events : s.events) {
    ASSERT_EQ(events.size(), 3u);  // 9 tokens: 4 + 4 + 1
    for (const StepEvent& e : events) {
      EXPECT_TRUE(e.rejected.empty());
      EXPECT_EQ(e.draft_forwards, std::min<int64_t>(3 * (e.step + 1), 3 + 3 + 1));
    }
  }
}

void expect_error(const std::string& method, const MethodOptions& options, const ModelSet& models,
                  const std::string& fragment) {
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(0);
  in.options = options;
  try {
    make_strategy(method, models, in);
    ADD_FAILURE() << method << ": expected an error mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST_F(decoding_strategies, OptionsAreChecked) {
  const ModelSet& m = tiny_models(ctx()).set;
  expect_error("sjd", {{"windw", "4"}}, m, "--windw");
  expect_error("scd-mc", {{"window", "0"}}, m, "--window must be in [1, 1024]");
  expect_error("scd-gs", {{"window", "x"}}, m, "expects an integer");
  expect_error("sjd", {{"init", "diagonal"}}, m, "--init must be one of random, left, above");
  expect_error("ar", {{"window", "4"}}, m, "ar has no option --window");
  expect_error("sd", {{"init", "left"}}, m, "sd has no option --init");
  expect_error("sjd", {{"window", "64"}}, m, "max_queries");
  expect_error("medusa", {}, m, "known: ar, sjd, scd-mc, scd-gs, sd");
  ModelSet no_drafter = m;
  no_drafter.drafter = nullptr;
  expect_error("sd", {}, no_drafter, "needs a drafter model");
  ModelSet no_latent = m;
  no_latent.latent_heads = nullptr;
  expect_error("ssd", {}, no_latent, "needs latent heads (--latent-heads FILE");
  expect_error("ssd", {{"rounds", "0"}}, m, "--rounds must be in [1,");
  ModelSet no_heads = m;
  no_heads.heads = nullptr;
  expect_error("ssd", {{"head-kind", "token"}}, no_heads, "--head-kind token needs draft heads");
  expect_error("sjd", {{"delta", "0.1"}}, m, "--delta belongs to --accept lantern");
  expect_error("sjd", {{"metric", "cosine"}}, m, "--metric belongs to --accept lantern");
  expect_error("lantern", {{"metric", "manhattan"}}, m, "--metric must be one of");
  expect_error("lantern", {{"delta", "2"}}, m, "--delta must be in [0, 1]");
  expect_error("lantern", {{"drafter", "model"}, {"init", "left"}}, m, "--init applies to --drafter jacobi only");
  expect_error("lantern", {{"nodes", "8"}}, m, "--nodes applies to --drafter eagle only");
  expect_error("lantern", {{"drafter", "eagle"}, {"window", "4"}, {"nodes", "8"}}, m,
               "--window does not apply to --drafter eagle");
  expect_error("eagle", {{"tree", "bushy"}}, m, "--tree must be one of dynamic, static, chain");
  expect_error("eagle", {{"candidates", "sampled"}, {"nodes", "8"}}, m,
               "--candidates sampled needs --tree static or chain");
  expect_error("eagle", {}, m, "max_queries");  // the default tree (1 + 60 + 6 queries) exceeds the tiny target's 64
  ModelSet no_eagle = m;
  no_eagle.eagle = nullptr;
  expect_error("eagle", {{"nodes", "8"}}, no_eagle, "needs an EAGLE drafter (--eagle-drafter FILE");
  ModelSet no_table = m;
  no_table.neighbours = {};
  expect_error("lantern", {}, no_table, "needs the codebook neighbour table with --metric l2");
  expect_error("scd-mc", {{"accept", "lantern"}}, no_table, "needs the codebook neighbour table");
  // A table of another metric is not used in its place.
  expect_error("lantern", {{"metric", "cosine"}}, m, "needs the codebook neighbour table with --metric cosine");
}

std::vector<std::string> option_names(const std::string& method) {
  std::vector<std::string> names;
  for (const OptionSpec& o : find_strategy(method).options) names.push_back(o.name);
  return names;
}

// The registry holds every method (a registration dropped by the linker would lose one) and what
// front ends read of them.
TEST(strategy_registry, DescribesEveryMethod) {
  EXPECT_EQ(strategy_names(), (std::vector<std::string>{"ar", "sjd", "scd-mc", "scd-gs", "sd", "eagle", "adaptive-tree",
                                                        "lantern", "lantern++", "vvs", "zipar", "pjd", "flashar",
                                                        "mulo", "hawk", "ssd", "ssd-coupled", "sjd-pac"}));
  EXPECT_EQ(reference_method_name(), "ar");
  EXPECT_EQ(option_names("sjd"), (std::vector<std::string>{"window", "init", "accept", "k", "delta", "metric", "lambda",
                                                           "group", "gap", "distance"}));
  EXPECT_EQ(option_names("sd"), (std::vector<std::string>{"window", "accept", "k", "delta", "metric", "lambda", "group",
                                                          "gap", "distance"}));
  EXPECT_EQ(option_names("ar"), std::vector<std::string>{"tokens-per-submit"});
  EXPECT_TRUE(find_strategy("lantern").needs_for({}).neighbours);
  EXPECT_FALSE(find_strategy("lantern").needs_for({}).drafter);
  EXPECT_TRUE(find_strategy("lantern").needs_for({{"drafter", "model"}}).drafter);
  EXPECT_TRUE(find_strategy("scd-mc").needs_for({{"accept", "lantern"}}).neighbours);
  EXPECT_FALSE(find_strategy("scd-mc").needs_for({}).neighbours);
  // The table's metric follows --metric, for every method whose acceptance reads the table.
  EXPECT_EQ(find_strategy("lantern").needs_for({}).neighbour_metric, NeighbourMetric::L2);
  EXPECT_EQ(find_strategy("lantern").needs_for({{"metric", "random"}}).neighbour_metric, NeighbourMetric::Random);
  EXPECT_EQ(find_strategy("sd").needs_for({{"accept", "lantern"}, {"metric", "cosine"}}).neighbour_metric,
            NeighbourMetric::Cosine);
  EXPECT_EQ(find_strategy("mulo").needs_for({{"metric", "cosine"}}).neighbour_metric, NeighbourMetric::Cosine);
  EXPECT_EQ(find_strategy("zipar").needs_for({{"verify", "lantern"}, {"metric", "cosine"}}).neighbour_metric,
            NeighbourMetric::Cosine);
  EXPECT_TRUE(find_strategy("scd-mc").needs_for({{"init", "heads"}}).heads);
  EXPECT_TRUE(find_strategy("mulo").needs_for({}).low_res);
  EXPECT_TRUE(find_strategy("scd-mc").lossless_for({}));
  EXPECT_FALSE(find_strategy("scd-mc").lossless_for({{"accept", "lantern"}}));
  EXPECT_TRUE(find_strategy("zipar").lossless_for({{"verify", "exact"}}));
  EXPECT_FALSE(find_strategy("lantern").lossless_for({}));
  GptConfig cfg;
  cfg.grid_size = 16;
  EXPECT_EQ(find_strategy("scd-mc").max_queries_for({{"window", "32"}}, cfg), 33);
  EXPECT_EQ(find_strategy("scd-mc").max_queries_for({{"window", "oops"}}, cfg), 17);  // sized at the default
  EXPECT_EQ(find_strategy("ssd-coupled").max_queries_for({}, cfg), 33);
  EXPECT_EQ(find_strategy("ssd").max_queries_for({}, cfg), 33);  // the rest of a row and one row below
  EXPECT_EQ(find_strategy("ssd").max_queries_for({{"block-rows", "3"}}, cfg), 65);
  EXPECT_TRUE(find_strategy("ssd").needs_for({}).latent_heads);
  EXPECT_TRUE(find_strategy("ssd").needs_for({{"head-kind", "token"}}).heads);
  EXPECT_FALSE(find_strategy("ssd").needs_for({{"head-kind", "token"}}).latent_heads);
  EXPECT_EQ(find_strategy("scd-mc").fixed_queries_for({{"init", "heads"}}), 0);
  EXPECT_EQ(find_strategy("lantern").fixed_queries_for({{"window", "8"}}), 9);
  EXPECT_EQ(find_strategy("lantern").fixed_queries_for({{"drafter", "model"}}), 0);
  EXPECT_THROW(find_strategy("nope"), Error);
  EXPECT_THROW(find_strategy("sjd").values({{"window", "0"}}), Error);
  EXPECT_THROW(find_strategy("sjd").values({{"depth", "2"}}), Error);
  // Bench's sample files split device time by the stages the strategies tag their commands with.
  const std::vector<std::string> stages = {stage::kTarget, stage::kDrafter, stage::kLowRes, stage::kHeads,
                                           stage::kSampling};
  ASSERT_EQ(static_cast<int>(stages.size()), ImageRecord::kStageCount);
  for (int k = 0; k < ImageRecord::kStageCount; ++k) EXPECT_EQ(stages[static_cast<size_t>(k)], ImageRecord::kStages[k]);
  for (const StrategyDescriptor* d : strategy_registry()) {
    EXPECT_FALSE(d->summary.empty()) << d->name;
    EXPECT_FALSE(d->reference.empty()) << d->name;
    for (const OptionSpec& o : d->options) {
      EXPECT_FALSE(o.help.empty()) << d->name << " --" << o.name;
      EXPECT_NO_THROW(d->values({{o.name, o.fallback}})) << d->name << " --" << o.name << "'s default is not accepted";
    }
  }
}

}  // namespace
}  // namespace vkspec
