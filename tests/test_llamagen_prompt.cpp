// LlamaGen text-to-image from a prompt (engine/families/llamagen_prompt.h): a tiny t2i GPT whose
// file names a tiny T5 encoder beside it (reference.py make-t5 with a SentencePiece model trained
// by make-spiece, converted by tools/convert_t5.py). Checked: the prompt's condition holds the
// cleaned caption's ids (with </s>) and the encoder's hidden states of them, equal to the float64
// reference's (tools/t5_model.py); ar with top-k 1 gives the same image from the prompt as from
// those reference embeddings, placed as sample_t2i.py places them; a prompt is encoded once; a
// model without a text encoder, or with one of another width, says so.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "decoding/generation.h"
#include "engine/checks/op_check.h"
#include "engine/model/gpt.h"
#include "engine/text/t5_caption.h"
#include "tests/support/python_reference.h"
#include "tests/support/tiny_gpt.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

constexpr int64_t kCaptionDim = 32, kPositions = 24;

class LlamaGenPromptTest : public testing::VulkanTest {
 protected:
  // The folder with t2i.safetensors naming t5.safetensors (and t5.spiece.model), or "" (skip).
  std::string models(std::string* skip) {
    const std::string dir = testing::scratch_dir("llamagen_prompt");
    auto r = testing::run_reference({"make-t5", dir + "/hf", "--d-model", std::to_string(kCaptionDim), "--layers", "2",
                                     "--heads", "4", "--d-kv", "8", "--d-ff", "48", "--vocab", "96"});
    if (r.skipped) {
      *skip = r.message;
      return "";
    }
    EXPECT_TRUE(r.ok) << r.message;
    r = testing::run_reference({"make-spiece", dir + "/hf"});  // spiece.model in the folder, as released
    EXPECT_TRUE(r.ok) << r.message;
    r = testing::run_tool("convert_t5.py", {dir + "/hf", dir + "/t5"});
    EXPECT_TRUE(r.ok) << r.message;
    testing::TinyGptSpec t;
    t.vocab = 8;
    t.grid = 3;
    t.caption_dim = kCaptionDim;
    t.cls_token_num = kPositions;
    t.scale = 0.3f;
    testing::write_tiny_gpt(dir + "/t2i.safetensors", t, {{"text_encoder", "t5.safetensors"}});
    testing::write_tiny_gpt(dir + "/plain.safetensors", t);
    t.caption_dim = 16;
    testing::write_tiny_gpt(dir + "/narrow.safetensors", t, {{"text_encoder", "t5.safetensors"}});
    return dir;
  }
};

TEST_F(LlamaGenPromptTest, APromptIsEncodedOnTheEngineAsTheReferenceEncodesIt) {
  std::string skip;
  const std::string dir = models(&skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  ASSERT_FALSE(HasFailure());
  GptOptions opt;
  opt.weights = DType::F32;
  Gpt gpt(ctx(), dir + "/t2i.safetensors", opt);
  EXPECT_TRUE(gpt.takes_prompt());  // what the viewer's prompt box asks
  const std::string prompt = "  A RED Fox in the snow...  ";
  const auto cond = gpt.prompt_condition(prompt);
  EXPECT_EQ(gpt.prompt_condition(prompt), cond) << "encoded twice";
  const auto* c = dynamic_cast<const CaptionEmbeddings*>(cond.get());
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(text::t5_caption_text(prompt), "a red fox in the snow");
  const std::vector<int32_t>& ids = c->prompt_ids();
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids.back(), 1) << "T5's </s> ends the ids";
  const std::string out = dir + "/hidden.safetensors";
  auto r = testing::run_reference({"t5-encode", dir + "/hf", "--ids", testing::comma_list(ids), "--length",
                                   std::to_string(ids.size()), "--out", out});
  ASSERT_TRUE(r.ok) << r.message;
  const std::vector<float> want = SafetensorsFile(out).read_f32("hidden");
  const std::vector<float> got = c->placed_values(static_cast<int64_t>(ids.size()));
  const double e = normalised_error(got, want);
  std::cout << "prompt embeddings: NMSE " << e * e << " (f16 encoder weights)\n";
  EXPECT_LE(e * e, 1e-5);
  // The same image greedy from the prompt as from the reference's embeddings.
  auto reference = std::make_shared<CaptionEmbeddings>("reference embeddings", static_cast<int64_t>(ids.size()),
                                                       kCaptionDim, want, std::vector<uint8_t>(ids.size(), 1));
  ModelSet set;
  set.ctx = &ctx();
  set.target = &gpt;
  StrategyInputs in;
  in.sampler.cfg = 3.0f;
  in.sampler.top_k = 1;
  in.condition = cond;
  const Generation from_prompt = generate_one("ar", set, in, false);
  in.condition = reference;
  EXPECT_EQ(from_prompt.tokens, generate_one("ar", set, in, false).tokens);
}

TEST_F(LlamaGenPromptTest, AModelWithoutItsTextEncoderSaysSo) {
  std::string skip;
  const std::string dir = models(&skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  ASSERT_FALSE(HasFailure());
  EXPECT_FALSE(Gpt(ctx(), dir + "/plain.safetensors").takes_prompt());
  try {
    Gpt(ctx(), dir + "/plain.safetensors").prompt_condition("a fox");
    ADD_FAILURE() << "a prompt without a text encoder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("text encoder"), std::string::npos) << e.what();
  }
  try {
    Gpt(ctx(), dir + "/narrow.safetensors").prompt_condition("a fox");
    ADD_FAILURE() << "a text encoder of another width";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("caption_dim"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkspec
