// The front ends' shared policy: which file backs each model role, the sampler options, method
// options as text.
#include <cstdlib>

#include <gtest/gtest.h>

#include "common/error.h"
#include "frontend/method_options_text.h"
#include "frontend/model_catalog.h"
#include "frontend/model_loading.h"
#include "frontend/sampler_options.h"

namespace vkspec::frontend {
namespace {

// Points VKSPEC_ASSETS at `dir` for one test.
class AssetDir {
 public:
  explicit AssetDir(const std::string& dir) { setenv("VKSPEC_ASSETS", dir.c_str(), 1); }
  ~AssetDir() { unsetenv("VKSPEC_ASSETS"); }
};

ArgParser parsed(const std::vector<std::string>& args) {
  std::set<std::string> options = {"--classifier"};
  for (const std::string& o : model_file_options()) options.insert(o);
  std::set<std::string> flags;
  for (const OptionDoc& o : sampler_option_table()) (o.value.empty() ? flags : options).insert(o.name);
  ArgParser ap("test", flags, options);
  ap.parse(args);
  return ap;
}

TEST(ModelCatalog, GivenFilesWinOverShippedOnes) {
  AssetDir assets(VKSPEC_ASSETS_DIR);
  const ModelCatalog c(model_files(parsed({"--model", "m.safetensors", "--heads", "h.safetensors"})));
  EXPECT_EQ(c.path(ModelRole::Target), "m.safetensors");
  EXPECT_EQ(c.path(ModelRole::Heads), "h.safetensors");
  EXPECT_EQ(c.path(ModelRole::Tokenizer), std::string(VKSPEC_ASSETS_DIR) + "/fmnist_vq.safetensors");
  // Shipped companions are trained for the shipped target only.
  EXPECT_EQ(c.companion(ModelRole::Drafter), "");
  EXPECT_EQ(c.companion(ModelRole::Heads), "h.safetensors");
}

TEST(ModelCatalog, ShippedCompanionsGoWithTheShippedTarget) {
  AssetDir assets(VKSPEC_ASSETS_DIR);
  const ModelCatalog c(model_files(parsed({"--drafter", "model"})));  // a way of drafting, not a file
  EXPECT_EQ(c.given(ModelRole::Drafter), "");
  EXPECT_EQ(c.companion(ModelRole::Drafter), std::string(VKSPEC_ASSETS_DIR) + "/fmnist_drafter16.safetensors");
  EXPECT_EQ(c.path(ModelRole::Classifier), std::string(VKSPEC_ASSETS_DIR) + "/fmnist_classifier.safetensors");
}

// The shipped prompt model (the default target with a prompt) has companions of its own: its draft
// heads; LlamaGen's drafter is not one of them.
TEST(ModelCatalog, TheShippedPromptModelHasItsOwnCompanions) {
  AssetDir assets(VKSPEC_ASSETS_DIR);
  const ModelCatalog c(model_files(parsed({}), true));
  const std::string dir = VKSPEC_ASSETS_DIR;
  EXPECT_EQ(c.path(ModelRole::Target), dir + "/fmnist_janus.safetensors");
  EXPECT_EQ(c.path(ModelRole::Heads), dir + "/fmnist_janus_heads.safetensors");
  EXPECT_EQ(c.companion(ModelRole::Heads), dir + "/fmnist_janus_heads.safetensors");
  EXPECT_EQ(c.path(ModelRole::Classifier), dir + "/fmnist_classifier.safetensors");
  EXPECT_EQ(c.companion(ModelRole::Drafter), "");
  try {
    c.path(ModelRole::Drafter);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fmnist_janus.safetensors"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--drafter FILE"), std::string::npos) << e.what();
  }
}

TEST(ModelCatalog, AMissingShippedModelNamesTheOptionThatReplacesIt) {
  AssetDir assets("/nonexistent");
  const ModelCatalog c(ModelFiles{});
  EXPECT_EQ(c.companion(ModelRole::LowRes), "");
  try {
    c.path(ModelRole::LowRes);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/fmnist_gpt8.safetensors"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--low-res"), std::string::npos) << e.what();
  }
}

// A sweep over --metric asks for one neighbour table per metric, each once; runs without a
// relaxed rule ask for none.
TEST(ModelRequest, OneNeighbourTablePerMetricRequested) {
  AssetDir assets(VKSPEC_ASSETS_DIR);
  const ModelCatalog c(ModelFiles{});
  const ModelRequest none = request_for(c, {{"ar", {}}, {"sjd", {}}});
  EXPECT_FALSE(none.needs.neighbours);
  EXPECT_TRUE(none.neighbour_metrics.empty());
  const ModelRequest r = request_for(c, {{"lantern", {}},
                                         {"lantern", {{"metric", "cosine"}}},
                                         {"sd", {{"accept", "lantern"}, {"metric", "cosine"}}},
                                         {"mulo", {{"metric", "random"}}},
                                         {"lantern", {{"metric", "l2"}}}});
  EXPECT_TRUE(r.needs.neighbours);
  EXPECT_EQ(r.neighbour_metrics,
            (std::vector<NeighbourMetric>{NeighbourMetric::L2, NeighbourMetric::Cosine, NeighbourMetric::Random}));
}

TEST(SamplerOptions, OverrideOnlyWhatIsGiven) {
  SamplerSettings card;
  card.cfg = 3;
  card.top_k = 7;
  const SamplerSettings s = sampler_overrides(parsed({"--cfg", "1.5", "--top-p", "0.9"})).applied_to(card);
  EXPECT_FLOAT_EQ(s.cfg, 1.5f);
  EXPECT_FLOAT_EQ(s.top_p, 0.9f);
  EXPECT_EQ(s.top_k, 7);
  EXPECT_THROW(sampler_overrides(parsed({"--top-p", "0"})), Error);
  EXPECT_THROW(sampler_overrides(parsed({"--temperature", "nan"})), Error);
}

// Off unless asked for; its constants need it on and are checked, and str() (which keys sample
// files and bench reports) tells a run with it from one without.
TEST(SamplerOptions, EntropyTemperatureIsOffUnlessGivenAndRecorded) {
  const SamplerSettings card;
  const SamplerSettings off = sampler_overrides(parsed({})).applied_to(card);
  EXPECT_FALSE(off.entropy.on);
  EXPECT_EQ(off.str(), card.str());
  const SamplerSettings on = sampler_overrides(parsed({"--entropy-temperature", "--entropy-b", "4"})).applied_to(card);
  EXPECT_TRUE(on.entropy.on);
  EXPECT_FLOAT_EQ(on.entropy.a, 2.5f);
  EXPECT_FLOAT_EQ(on.entropy.b, 4.0f);
  EXPECT_FLOAT_EQ(on.entropy.c, 0.6f);
  EXPECT_NE(on.str().find("entropy temperature a 2.5 b 4 c 0.6"), std::string::npos) << on.str();
  EXPECT_THROW(sampler_overrides(parsed({"--entropy-a", "1"})).applied_to(card), Error);
  EXPECT_THROW(sampler_overrides(parsed({"--entropy-temperature", "--entropy-b", "0"})), Error);
  EXPECT_THROW(
      sampler_overrides(parsed({"--entropy-temperature", "--entropy-a", "0", "--entropy-c", "0"})).applied_to(card),
      Error);
}

TEST(MethodOptionsText, RoundTripsAndRejectsItemsWithoutAValue) {
  const MethodOptions o = parse_method_options("window=16,,--init=above");
  EXPECT_EQ(o.at("window"), "16");
  EXPECT_EQ(o.at("init"), "above");
  EXPECT_EQ(format_method_options(parse_method_options("b=2,a=1")), "a=1,b=2");
  EXPECT_TRUE(parse_method_options("").empty());
  EXPECT_THROW(parse_method_options("window"), Error);
  EXPECT_THROW(parse_method_options("=3"), Error);
}

}  // namespace
}  // namespace vkspec::frontend
