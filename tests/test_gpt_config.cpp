// GptConfig from metadata: LlamaGen's ModelArgs (model_type, cls_token_num, caption_dim,
// n_kv_head) with an error naming the key for every model the engine cannot run.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "common/error.h"
#include "engine/model/gpt_config.h"
#include "engine/model/safetensors_writer.h"

namespace vkspec {
namespace {

GptConfig config_of(const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> meta = {{"vkspec.kind", "gpt"}, {"dim", "64"},        {"n_layer", "1"},
                                             {"n_head", "2"},        {"vocab_size", "32"}, {"grid_size", "4"},
                                             {"num_classes", "5"}};
  for (const auto& [k, v] : extra) meta[k] = v;
  SafetensorsWriter w;
  for (const auto& [k, v] : meta) w.set_metadata(k, v);
  w.add_f32("x", {1}, {0.0f});
  return GptConfig::from_file(SafetensorsFile("config.safetensors", w.take_bytes()));
}

std::string error_of(const std::map<std::string, std::string>& extra) {
  try {
    config_of(extra);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "\"" << (text) << "\" lacks \"" << (part) << "\""

TEST(GptConfig, ClassConditionalByDefault) {
  const GptConfig c = config_of({});
  EXPECT_EQ(c.model_type, ModelType::c2i);
  EXPECT_EQ(c.cls_token_num, 1);
  EXPECT_EQ(c.n_kv_head, 2);
  EXPECT_EQ(c.caption_dim, 0);
}

TEST(GptConfig, TextConditionalFollowsModelArgs) {
  const GptConfig c = config_of({{"model_type", "t2i"}, {"caption_dim", "2048"}});
  EXPECT_EQ(c.model_type, ModelType::t2i);
  EXPECT_EQ(c.cls_token_num, 120);  // LlamaGen's T5 length
  EXPECT_EQ(c.caption_dim, 2048);
  EXPECT_EQ(c.seq_len(), 120 + 16);
  EXPECT_EQ(config_of({{"model_type", "t2i"}, {"caption_dim", "8"}, {"cls_token_num", "7"}}).position_of_token(0), 7);
}

TEST(GptConfig, ModelsTheEngineCannotRunNameTheKey) {
  EXPECT_CONTAINS(error_of({{"model_type", "i2i"}}), "model_type 'i2i'");
  EXPECT_CONTAINS(error_of({{"model_type", "t2i"}}), "caption_dim");
  EXPECT_CONTAINS(error_of({{"cls_token_num", "3"}}), "cls_token_num=3");
  EXPECT_CONTAINS(error_of({{"n_head", "4"}, {"n_kv_head", "3"}}), "n_kv_head=3 does not divide n_head=4");
  EXPECT_CONTAINS(error_of({{"n_head", "4"}, {"n_kv_head", "2"}}), "grouped-query attention");
  EXPECT_CONTAINS(error_of({{"num_classes", "0"}}), "num_classes");
  EXPECT_CONTAINS(error_of({}), "(no error)");
}

}  // namespace
}  // namespace vkspec
