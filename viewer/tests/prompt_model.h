#pragma once
// A tiny prompt-driven model for the viewer's tests: a random Janus-Pro (tests/support/tiny_gpt.h's
// recipe) whose image tokens are the shipped VQ's 1024 codes, on an 8x8 grid, with a tokenizer it
// can take text through. testing::write_tiny_janus names none (its text vocabulary is 16), so the
// tokenizer here is tests/data/tiny_bytelevel_tokenizer.json with Janus's three special tokens as
// its added tokens, ids 314..316: the text vocabulary's last three, as synthetic_janus makes them
// BOS, pad and <begin_of_image>.
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "tests/support/tiny_gpt.h"

namespace vkspec::viewer::prompt_test {

constexpr int64_t kPromptPositions = 48;  // a few words' prompt with the template fits

struct PromptModel {
  std::string model, tokenizer;
};

inline void write_janus_tokenizer(const std::string& source, const std::string& path) {
  std::ifstream in(source);
  if (!in) throw Error("cannot read " + source);
  nlohmann::json t = nlohmann::json::parse(in);
  auto special = [](int id, const char* content) {
    return nlohmann::json{{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
                          {"rstrip", false}, {"normalized", false}, {"special", true}};
  };
  const char* bos = "<\uff5cbegin\u2581of\u2581sentence\uff5c>";
  t["added_tokens"] = {special(314, bos), special(315, "<\uff5c\u2581pad\u2581\uff5c>"),
                       special(316, "<begin_of_image>")};
  t["post_processor"]["single"][0]["SpecialToken"]["id"] = bos;
  t["post_processor"]["pair"][0]["SpecialToken"]["id"] = bos;
  t["post_processor"]["special_tokens"] = {{bos, {{"id", bos}, {"ids", {314}}, {"tokens", {bos}}}}};
  std::ofstream out(path);
  out << t.dump(1);
  if (!out) throw Error("cannot write " + path);
}

// Writes dir/janus.safetensors and dir/janus_tokenizer.json beside it (metadata tokenizer).
inline PromptModel write_prompt_model(const std::string& dir, const std::string& source_dir) {
  PromptModel m{dir + "/janus.safetensors", dir + "/janus_tokenizer.json"};
  write_janus_tokenizer(source_dir + "/tests/data/tiny_bytelevel_tokenizer.json", m.tokenizer);
  JanusShape shape;
  shape.dim = 32;
  shape.n_layer = 1;
  shape.n_head = 2;
  shape.ffn_hidden = 64;
  shape.text_vocab = 317;
  shape.image_vocab = 1024;
  shape.grid = 8;
  shape.head_hidden = 32;
  shape.prompt_tokens = kPromptPositions;
  SafetensorsWriter w = synthetic_janus(shape, vkspec::testing::tiny_janus_fill(7, 0.3f), StDType::F32);
  w.set_metadata("tokenizer", "janus_tokenizer.json");
  w.write(m.model);
  return m;
}

}  // namespace vkspec::viewer::prompt_test
