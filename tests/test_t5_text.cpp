// LlamaGen's caption cleaning before T5 (engine/text/t5_caption.h) against the released
// T5Embedder.text_preprocessing's outputs on these captions (computed with language/t5.py and
// bs4 4.11, ftfy.fix_text left out as the port leaves it; each caption here is one ftfy leaves
// unchanged), and a T5 SentencePiece model (tests/data/tiny_spiece.model, trained with Debian's
// python3-sentencepiece) encoding as the Python library does, with </s> and truncation.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "engine/text/sentencepiece_tokenizer.h"
#include "engine/text/t5_caption.h"
#include "tests/support/python_reference.h"

namespace vkspec::text {
namespace {

TEST(T5Caption, CleansAsTheReleasedCode) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"A blue Porsche 356 parked in front of a yellow brick wall.",
       "a blue porsche 356 parked in front of a yellow brick wall."},
      {"A portrait photo of a kangaroo wearing an orange hoodie and blue sunglasses standing on the grassin front of "
       "the Sydney Opera House holding a sign on the chest that says Welcome Friends!",
       "a portrait photo of a kangaroo wearing an orange hoodie and blue sunglasses standing on the grassin front of "
       "the sydney opera house holding a sign on the chest that says welcome friends!"},
      {"  An Astronaut  riding a horse, in the forest...  ", "an astronaut riding a horse, in the forest"},
      {"a+red+fox%20in%20the+snow", "a red fox in the snow"},
      {"“Quoted” text — with dashes – and ‘single’ quotes", "\"quoted\" text - with dashes - and 'single' quotes"},
      {"visit https://example.com/page now @someone #12 photo.jpg", "visit now"},
      {"this-is-my-cute-cat_with_more_dashes", "this is my cute cat with more dashes"},
      {"<b>Bold</b> &amp; brave &quot;words&quot;", "bold brave \"words\""},
      {"free shipping worldwide! click on here page 12", "worldwide!"},
      {"A cat, a dog,and a bird:   friends", "a cat, a dog, and a bird: friends"},
      {"'single quoted whole'", "single quoted whole"},
      {"product jc6640 and 6640vc231 at 1920x1080", "product and at"},
      {"Ünïcödé ÇAPS and İstanbul", "ünïcödé çaps and i̇stanbul"},
      {"a 1.5x2 grid; time 3:45  ", "a 1. grid; time 3:45"},
  };
  for (const auto& [given, want] : cases) EXPECT_EQ(t5_caption_text(given), want) << given;
}

// Ids of texts the model has pieces for, pieces it lacks (<unk>), an empty one and a long one
// cut to --max with its </s> kept, against python3-sentencepiece.
TEST(T5SentencePiece, EncodesAsThePythonLibrary) {
  const std::string dir = testing::scratch_dir("t5_spiece");
  auto r = testing::run_reference({"make-spiece", dir});
  if (r.skipped) GTEST_SKIP() << r.message;
  ASSERT_TRUE(r.ok) << r.message;
  const std::vector<std::string> texts = {"a red fox",
                                          "\u00fcn\u00efc\u00f6d\u00e9 and a kangaroo in istanbul",
                                          "",
                                          "zebra xylophone quokka",
                                          "  spaces   inside  and out ",
                                          "a portrait photo of a kangaroo wearing an orange hoodie in front of a "
                                          "yellow brick wall, a map of the united states made out of sushi"};
  std::string joined;
  for (size_t i = 0; i < texts.size(); ++i) joined += (i ? "\n" : "") + texts[i];
  std::ofstream(dir + "/texts.txt") << joined;
  r = testing::run_reference({"spiece-encode", dir + "/spiece.model", "--texts", dir + "/texts.txt", "--max", "16",
                              "--out", dir + "/ids.json"});
  ASSERT_TRUE(r.ok) << r.message;
  const auto want = nlohmann::json::parse(std::ifstream(dir + "/ids.json")).get<std::vector<std::vector<int32_t>>>();
  const SentencePieceTokenizer sp = SentencePieceTokenizer::load(dir + "/spiece.model");
  EXPECT_EQ(sp.eos_id(), 1);
  EXPECT_EQ(sp.pad_id(), 0);
  ASSERT_EQ(want.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(sp.encode(texts[i], 16), want[i]) << texts[i];
  EXPECT_THROW(SentencePieceTokenizer::load(dir + "/texts.txt"), vkspec::Error);
}

}  // namespace
}  // namespace vkspec::text
