// Conditions: class labels and caption embeddings checked against a model's config, and caption
// files in LlamaGen's T5 layout (.npy [1, tokens, dim]) and safetensors; every broken file fails
// with a message naming it.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "engine/model/condition.h"
#include "engine/model/safetensors_writer.h"
#include "engine/vk/tensor.h"

namespace vkspec {
namespace {

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "\"" << (text) << "\" lacks \"" << (part) << "\""

std::string temp_path(const std::string& ext) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "vkspec_" + info->test_suite_name() + "_" + info->name() + "_" +
         std::to_string(::getpid()) + ext;
}

// What np.save writes (format 1.0): magic, version, u16 header length, dict padded to 64 bytes.
void write_npy(const std::string& path, const std::string& descr, const std::string& shape, const void* data,
               size_t bytes, const std::string& order = "False") {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }";
  while ((10 + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  f.put(static_cast<char>(dict.size() & 0xff));
  f.put(static_cast<char>(dict.size() >> 8));
  f << dict;
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

std::string error_of(const std::string& path) {
  try {
    CaptionEmbeddings::load(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

GptConfig c2i_config() {
  GptConfig c;
  c.num_classes = 10;
  return c;
}

TEST(Condition, ClassLabelRange) {
  const GptConfig cfg = c2i_config();
  EXPECT_NO_THROW(ClassLabel(0).check(cfg));
  EXPECT_NO_THROW(ClassLabel(9).check(cfg));
  EXPECT_THROW(ClassLabel(10).check(cfg), Error);
  EXPECT_THROW(ClassLabel(-1).check(cfg), Error);
  EXPECT_EQ(ClassLabel(3).describe(), "class 3");
}

TEST(Condition, KindsMatchTheModelType) {
  GptConfig t2i;
  t2i.model_type = ModelType::t2i;
  t2i.caption_dim = 2;
  t2i.cls_token_num = 4;
  EXPECT_THROW(ClassLabel(0).check(t2i), Error);
  const CaptionEmbeddings fits("c", 3, 2, {1, 2, 3, 4, 5, 6}, {1, 1, 1});
  EXPECT_NO_THROW(fits.check(t2i));
  const CaptionEmbeddings too_long("c", 5, 2, std::vector<float>(10, 1.0f), {1, 1, 1, 1, 1});
  EXPECT_THROW(too_long.check(t2i), Error);
  t2i.caption_dim = 3;
  EXPECT_THROW(fits.check(t2i), Error);
}

TEST(Condition, GuidedRowsPutTheNullFormSecond) {
  const ClassLabel c(4);
  EXPECT_EQ(guided_rows(c, 1), (std::vector<const Condition*>{&c}));
  EXPECT_EQ(guided_rows(c, 2), (std::vector<const Condition*>{&c, nullptr}));
  EXPECT_THROW(guided_rows(c, 3), Error);
}

TEST(Condition, CaptionFromLlamaGenNpy) {
  // LlamaGen's extract_t5_feature.py saves the real tokens only: [1, tokens, dim] f32.
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  const std::string path = temp_path(".npy");
  write_npy(path, "<f4", "(1, 3, 2)", v.data(), v.size() * 4);
  const CaptionEmbeddings c = CaptionEmbeddings::load(path);
  EXPECT_EQ(c.tokens(), 3);
  EXPECT_EQ(c.dim(), 2);
  EXPECT_EQ(c.values(), v);
  EXPECT_EQ(c.valid_tokens(), 3);
  EXPECT_CONTAINS(c.describe(), "(3 of 3 tokens)");
  // Left padding: the caption ends at the last condition position.
  EXPECT_EQ(c.placed_mask(5), (std::vector<uint8_t>{0, 0, 1, 1, 1}));
  EXPECT_EQ(c.placed_values(5), (std::vector<float>{0, 0, 0, 0, 1, 2, 3, 4, 5, 6}));
  EXPECT_THROW(c.placed_mask(2), Error);
  EXPECT_THROW(c.check(c2i_config()), Error);  // a class-conditional model takes no captions
  std::remove(path.c_str());
}

TEST(Condition, CaptionPaddingIsAllZeroTokens) {
  // A padded [tokens, dim] dump as LlamaGen feeds it (padding first, zeroed), f16 this time.
  const std::vector<float> f = {0, 0, 0, 0, 0.5f, 0, 0, -2};
  std::vector<uint16_t> h;
  for (float x : f) h.push_back(float_to_half(x));
  const std::string path = temp_path(".npy");
  write_npy(path, "<f2", "(4, 2)", h.data(), h.size() * 2);
  const CaptionEmbeddings c = CaptionEmbeddings::load(path);
  EXPECT_EQ(c.valid(), (std::vector<uint8_t>{0, 0, 1, 1}));
  EXPECT_EQ(c.values(), f);
  EXPECT_CONTAINS(c.describe(), "(2 of 4 tokens)");
  std::remove(path.c_str());
}

TEST(Condition, CaptionFromSafetensors) {
  const std::string path = temp_path(".safetensors");
  SafetensorsWriter w;
  w.add_f32("caption", {1, 2, 3}, {1, 2, 3, 4, 5, 6}, StDType::BF16);
  w.write(path);
  const CaptionEmbeddings c = CaptionEmbeddings::load(path);
  EXPECT_EQ(c.tokens(), 2);
  EXPECT_EQ(c.dim(), 3);
  EXPECT_EQ(c.values(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  SafetensorsWriter two;
  two.add_f32("a", {1, 2}, {1, 2});
  two.add_f32("b", {1, 2}, {1, 2});
  two.write(path);
  EXPECT_CONTAINS(error_of(path), "exactly one tensor");
  std::remove(path.c_str());
}

TEST(Condition, BrokenCaptionFilesNameTheProblem) {
  const std::string path = temp_path(".npy");
  EXPECT_CONTAINS(error_of(path), "cannot open");
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  write_npy(path, "<f4", "(1, 3, 2)", v.data(), 5 * 4);  // truncated
  EXPECT_CONTAINS(error_of(path), "the shape needs 24");
  write_npy(path, "<f8", "(3,)", v.data(), 24);
  EXPECT_CONTAINS(error_of(path), "'<f8' is not");
  write_npy(path, "<f4", "(2, 3, 1)", v.data(), 24);
  EXPECT_CONTAINS(error_of(path), "expected [tokens, dim] or [1, tokens, dim]");
  write_npy(path, "<f4", "(6,)", v.data(), 24);
  EXPECT_CONTAINS(error_of(path), "have shape [6]");
  write_npy(path, "<f4", "(3, 2)", v.data(), 24, "True");
  EXPECT_CONTAINS(error_of(path), "Fortran order");
  const std::vector<float> zeros(6, 0.0f);
  write_npy(path, "<f4", "(3, 2)", zeros.data(), 24);
  EXPECT_CONTAINS(error_of(path), "no valid token");
  const float nan[2] = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  write_npy(path, "<f4", "(1, 2)", nan, 8);
  EXPECT_CONTAINS(error_of(path), "non-finite");
  {
    std::ofstream f(path, std::ios::binary);
    f << "not numpy at all";
  }
  EXPECT_CONTAINS(error_of(path), "bad magic");
  EXPECT_CONTAINS(error_of(path), path);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace vkspec
