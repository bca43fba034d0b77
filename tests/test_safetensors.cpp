// safetensors reader, writer and WeightStore: round trips, and every way a file can be broken
// fails at open with a message naming the file and the tensor.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/model/safetensors.h"
#include "engine/model/safetensors_writer.h"
#include "engine/model/weights.h"
#include "common/error.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "\"" << (text) << "\" lacks \"" << (part) << "\""

// Unique per test so parallel ctest processes never share a file.
std::string temp_path(const std::string& stem = "model") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "vkspec_" + info->test_suite_name() + "_" + info->name() + "_" +
         std::to_string(::getpid()) + "_" + stem + ".safetensors";
}

// A file from raw parts; header_len overrides the length field to forge broken files.
void write_raw(const std::string& path, const std::string& header, const std::string& data = {},
               int64_t header_len = -1) {
  const uint64_t n = header_len < 0 ? header.size() : static_cast<uint64_t>(header_len);
  std::ofstream f(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) f.put(static_cast<char>(n >> (8 * i)));
  f << header << data;
}

// The message of the Error that opening `path` throws (fails the test when it opens).
std::string open_error(const std::string& path) {
  try {
    SafetensorsFile f(path);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << path << " opened without error";
  return {};
}

// One valid tensor "w": F32 [2, 3] with 24 data bytes, plus what the caller appends.
std::string one_tensor(const std::string& w_fields) { return "{\"w\":{" + w_fields + "}}"; }
const std::string kData24(24, '\0');

std::vector<float> random_floats(size_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

class SafetensorsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const std::string& p : cleanup_) std::remove(p.c_str());
  }
  std::string path(const std::string& stem = "model") {
    cleanup_.push_back(temp_path(stem));
    return cleanup_.back();
  }
  std::vector<std::string> cleanup_;
};

TEST_F(SafetensorsTest, RoundTripF32WithMetadata) {
  const std::string p = path();
  const std::vector<float> a = random_floats(6, 1.f, 1), b = random_floats(5, 1.f, 2);
  SafetensorsWriter w;
  w.set_metadata("vkspec.kind", "gpt");
  w.set_metadata("dim", "768");
  w.add_f32("b.weight", {5}, b);
  w.add_f32("a.weight", {2, 3}, a);
  w.write(p);

  SafetensorsFile f(p);
  EXPECT_EQ(f.tensor_names(), (std::vector<std::string>{"b.weight", "a.weight"}));  // file order
  const StTensorInfo& ia = f.info("a.weight");
  EXPECT_EQ(ia.dtype, StDType::F32);
  EXPECT_EQ(ia.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ia.numel, 6);
  EXPECT_EQ(ia.bytes(), 24u);
  EXPECT_EQ(f.read_f32("a.weight"), a);
  EXPECT_EQ(f.read_f32("b.weight"), b);
  EXPECT_EQ(f.meta("vkspec.kind"), "gpt");
  EXPECT_EQ(f.metadata().size(), 2u);
  // The data section starts 8-byte aligned, as tools/safetensors_io.py also guarantees.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f.data("b.weight")) % 8, 0u);
}

TEST_F(SafetensorsTest, RoundTripF16AndBF16) {
  const std::string p = path();
  const std::vector<float> v = random_floats(37, 3.f, 3);
  SafetensorsWriter w;
  w.add_f32("h", {37}, v, StDType::F16);
  w.add_f32("b", {1, 37}, v, StDType::BF16);
  w.write(p);
  SafetensorsFile f(p);
  EXPECT_EQ(f.info("h").dtype, StDType::F16);
  EXPECT_EQ(f.info("b").dtype, StDType::BF16);
  const std::vector<float> h = f.read_f32("h"), b = f.read_f32("b");
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(h[i], half_to_float(float_to_half(v[i])));
    EXPECT_EQ(b[i], bf16_to_float(float_to_bf16(v[i])));
    EXPECT_NEAR(b[i], v[i], std::fabs(v[i]) * (1.f / 256));  // 8 significant bits
  }
}

TEST_F(SafetensorsTest, UnalignedTensorsAndScalarsReadBack) {
  // 3 f16 values leave the next f32 tensor 2 bytes off 4-byte alignment.
  const std::string p = path();
  SafetensorsWriter w;
  w.add_f32("odd", {3}, {1.f, 2.f, 3.f}, StDType::F16);
  w.add_f32("after", {2}, {-1.5f, 0.25f});
  w.add_f32("scalar", {}, {7.f});
  w.add_f32("empty", {0, 4}, {});
  const int32_t ids[3] = {5, -1, 1 << 20};
  w.add("ids", StDType::I32, {3}, ids, sizeof ids);
  w.write(p);
  SafetensorsFile f(p);
  EXPECT_EQ(f.read_f32("after"), (std::vector<float>{-1.5f, 0.25f}));
  EXPECT_EQ(f.read_f32("scalar"), (std::vector<float>{7.f}));
  EXPECT_EQ(f.info("scalar").shape_str(), "[]");
  EXPECT_EQ(f.info("empty").numel, 0);
  int32_t back[3];
  std::memcpy(back, f.data("ids"), sizeof back);
  EXPECT_EQ(back[2], 1 << 20);
  try {
    f.read_f32("ids");
    ADD_FAILURE() << "read_f32 of I32";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), p);
    EXPECT_CONTAINS(e.what(), "tensor ids is I32");
  }
}

TEST_F(SafetensorsTest, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.f), 0x3f80);
  EXPECT_EQ(float_to_bf16(bf16_to_float(0x3f81)), 0x3f81);
  // 1 + 2^-8 lies halfway between 0x3f80 and 0x3f81: ties go to the even pattern.
  EXPECT_EQ(float_to_bf16(1.f + 1.f / 256), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.f + 3.f / 256), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  EXPECT_EQ(float_to_bf16(-INFINITY), 0xff80);
}

TEST_F(SafetensorsTest, TypedMetadataGetters) {
  const std::string p = path();
  SafetensorsWriter w;
  w.set_metadata("dim", "768");
  w.set_metadata("norm_eps", "1e-06");
  w.set_metadata("rope_base", "10000.0");
  w.set_metadata("ch_mult", "1,1,2, 2,4");
  w.set_metadata("none", "");
  w.write(p);
  SafetensorsFile f(p);
  EXPECT_EQ(f.meta_int("dim"), 768);
  EXPECT_DOUBLE_EQ(f.meta_float("norm_eps"), 1e-6);
  EXPECT_DOUBLE_EQ(f.meta_float("rope_base"), 10000.0);
  EXPECT_DOUBLE_EQ(f.meta_float("dim"), 768.0);
  EXPECT_EQ(f.meta_int_list("ch_mult"), (std::vector<int64_t>{1, 1, 2, 2, 4}));
  EXPECT_TRUE(f.meta_int_list("none").empty());
  EXPECT_EQ(f.meta_int("n_kv_head", 12), 12);
  EXPECT_EQ(f.meta_int("dim", 12), 768);
  EXPECT_DOUBLE_EQ(f.meta_float("missing", 0.5), 0.5);
  EXPECT_TRUE(f.tensor_names().empty());
}

TEST_F(SafetensorsTest, MalformedMetadataNumbersNameKeyAndFile) {
  const std::string p = path();
  SafetensorsWriter w;
  w.set_metadata("dim", "768x");
  w.set_metadata("eps", "1e-6.5");
  w.set_metadata("nan", "nan");
  w.set_metadata("ch_mult", "1,,2");
  w.set_metadata("trailing", "1,2,");
  w.set_metadata("float_int", "1.5");
  w.write(p);
  SafetensorsFile f(p);
  auto error_of = [](auto&& fn) -> std::string {
    try {
      fn();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string e1 = error_of([&] { f.meta_int("dim"); });
  EXPECT_CONTAINS(e1, p);
  EXPECT_CONTAINS(e1, "metadata \"dim\" = \"768x\" is not an integer");
  EXPECT_CONTAINS(error_of([&] { f.meta_int("float_int"); }), "\"float_int\"");
  EXPECT_CONTAINS(error_of([&] { f.meta_float("eps"); }), "metadata \"eps\" = \"1e-6.5\" is not a finite number");
  EXPECT_CONTAINS(error_of([&] { f.meta_float("nan"); }), "\"nan\"");
  EXPECT_CONTAINS(error_of([&] { f.meta_int_list("ch_mult"); }), "\"ch_mult\" = \"1,,2\"");
  EXPECT_CONTAINS(error_of([&] { f.meta_int_list("trailing"); }), "\"trailing\"");
  // A fallback covers absence, never a malformed value.
  EXPECT_CONTAINS(error_of([&] { f.meta_int("dim", 1); }), "\"dim\"");
  const std::string missing = error_of([&] { f.meta_int("n_layer"); });
  EXPECT_CONTAINS(missing, p);
  EXPECT_CONTAINS(missing, "metadata \"n_layer\" is missing");
}

TEST_F(SafetensorsTest, NonStringMetadataValueIsRejected) {
  const std::string p = path();
  write_raw(p, "{\"__metadata__\":{\"dim\":768}}");
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "metadata \"dim\" is 768, not a string");
}

TEST_F(SafetensorsTest, MissingFile) {
  const std::string p = path();
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "cannot open");
}

TEST_F(SafetensorsTest, FileShorterThanHeaderLength) {
  const std::string p = path();
  std::ofstream(p, std::ios::binary) << "abc";
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "3 bytes, too short");
}

TEST_F(SafetensorsTest, HeaderLengthLargerThanFile) {
  const std::string p = path();
  write_raw(p, "{}", "", 4096);
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "header length 4096 exceeds the file (10 bytes)");
}

TEST_F(SafetensorsTest, AbsurdHeaderLength) {
  // A sparse 160 MiB file: the length fits in the file but no real header is that large.
  const std::string p = path();
  write_raw(p, "{}", "", 150ll << 20);
  ASSERT_EQ(::truncate(p.c_str(), 160ll << 20), 0);
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "is implausible");
}

TEST_F(SafetensorsTest, InvalidJson) {
  const std::string p = path();
  write_raw(p, "{\"w\":{\"dtype\":\"F32\",", kData24);
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "invalid header JSON");
}

TEST_F(SafetensorsTest, HeaderNotAnObject) {
  const std::string p = path();
  write_raw(p, "[1, 2]");
  EXPECT_CONTAINS(open_error(p), p + ": header is not a JSON object");
}

TEST_F(SafetensorsTest, MissingFields) {
  const std::pair<const char*, const char*> cases[] = {
      {"\"shape\":[2,3],\"data_offsets\":[0,24]", "missing \"dtype\""},
      {"\"dtype\":\"F32\",\"data_offsets\":[0,24]", "missing \"shape\""},
      {"\"dtype\":\"F32\",\"shape\":[2,3]", "missing \"data_offsets\""},
  };
  for (const auto& [fields, expect] : cases) {
    const std::string p = path(expect + 9);
    write_raw(p, one_tensor(fields), kData24);
    const std::string e = open_error(p);
    EXPECT_CONTAINS(e, p);
    EXPECT_CONTAINS(e, std::string("tensor w: ") + expect);
  }
}

TEST_F(SafetensorsTest, MalformedFields) {
  const std::pair<const char*, const char*> cases[] = {
      {"\"dtype\":3,\"shape\":[2,3],\"data_offsets\":[0,24]", "dtype 3 is not a string"},
      {"\"dtype\":\"F32\",\"shape\":6,\"data_offsets\":[0,24]", "shape 6 is not an array"},
      {"\"dtype\":\"F32\",\"shape\":[2,1.5],\"data_offsets\":[0,24]", "dimension 1.5 is not an integer"},
      {"\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0]", "data_offsets [0] is not [begin, end]"},
      {"\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,\"24\"]", "\"24\" is not an integer"},
      {"\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[-8,16]", "-8 is negative"},
  };
  int i = 0;
  for (const auto& [fields, expect] : cases) {
    const std::string p = path(std::to_string(i++));
    write_raw(p, one_tensor(fields), kData24);
    const std::string e = open_error(p);
    EXPECT_CONTAINS(e, p);
    EXPECT_CONTAINS(e, "tensor w: ");
    EXPECT_CONTAINS(e, expect);
  }
}

TEST_F(SafetensorsTest, NegativeDimension) {
  const std::string p = path();
  write_raw(p, one_tensor("\"dtype\":\"F32\",\"shape\":[-2,-3],\"data_offsets\":[0,24]"), kData24);
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "tensor w: shape [-2,-3]: dimension -2 is negative");
}

TEST_F(SafetensorsTest, UnknownDtype) {
  const std::string p = path();
  write_raw(p, one_tensor("\"dtype\":\"F64\",\"shape\":[3],\"data_offsets\":[0,24]"), kData24);
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "tensor w: unsupported dtype F64");
}

TEST_F(SafetensorsTest, OffsetsBeyondData) {
  const std::string p = path();
  write_raw(p, one_tensor("\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[8,32]"), kData24);
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "tensor w: data_offsets [8, 32) run past the data section (24 bytes)");
}

TEST_F(SafetensorsTest, TruncatedData) {
  // A valid file cut short: the last tensor's bytes are gone.
  const std::string p = path();
  SafetensorsWriter w;
  w.add_f32("first", {4}, {1, 2, 3, 4});
  w.add_f32("last", {64}, std::vector<float>(64, 1.f));
  w.write(p);
  std::ifstream in(p, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 100);
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "tensor last: data_offsets [16, 272) run past the data section");
}

TEST_F(SafetensorsTest, OffsetsReversed) {
  const std::string p = path();
  write_raw(p, one_tensor("\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[24,0]"), kData24);
  EXPECT_CONTAINS(open_error(p), "tensor w: data_offsets [24, 0) ends before it begins");
}

TEST_F(SafetensorsTest, SizeMismatchWithShape) {
  const std::string p = path();
  write_raw(p, one_tensor("\"dtype\":\"F16\",\"shape\":[2,3],\"data_offsets\":[0,24]"), kData24);
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "tensor w: data_offsets [0, 24) hold 24 bytes but F16 [2, 3] needs 12");
}

TEST_F(SafetensorsTest, ShapeProductOverflow) {
  // 2^32 * 2^32 wraps to 0 in 64 bits; a naive product would accept data_offsets [0, 0).
  const std::string p = path();
  write_raw(p, one_tensor("\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]"), kData24);
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "tensor w: shape [4294967296, 4294967296] overflows a 64-bit size");
}

TEST_F(SafetensorsTest, OverlappingTensors) {
  const std::string p = path();
  write_raw(p,
            "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
            "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]},"
            "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}}",
            kData24);
  const std::string e = open_error(p);
  EXPECT_CONTAINS(e, p);
  EXPECT_CONTAINS(e, "tensors a [0, 16) and b [12, 20) overlap");
}

TEST_F(SafetensorsTest, DuplicateTensorName) {
  const std::string p = path();
  write_raw(p,
            "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
            "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
            kData24);
  EXPECT_CONTAINS(open_error(p), p + ": tensor w appears twice");
}

TEST_F(SafetensorsTest, MissingTensorNamesFileAndTensor) {
  const std::string p = path();
  SafetensorsWriter w;
  w.add_f32("tok_embeddings.weight", {2}, {1, 2});
  w.write(p);
  SafetensorsFile f(p);
  EXPECT_FALSE(f.has("output.weight"));
  try {
    f.info("output.weight");
    ADD_FAILURE() << "info() of a missing tensor";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), p);
    EXPECT_CONTAINS(e.what(), "no tensor output.weight");
  }
}

TEST_F(SafetensorsTest, WriterRejectsBadInput) {
  SafetensorsWriter w;
  const float x[2] = {1, 2};
  EXPECT_THROW(w.add("w", StDType::F32, {3}, x, sizeof x), Error);
  EXPECT_THROW(w.add("__metadata__", StDType::F32, {2}, x, sizeof x), Error);
  w.add("w", StDType::F32, {2}, x, sizeof x);
  EXPECT_THROW(w.add("w", StDType::F32, {2}, x, sizeof x), Error);
  EXPECT_THROW(w.add_f32("i", {2}, {1, 2}, StDType::I32), Error);
  EXPECT_THROW(w.write("/nonexistent-dir/x.safetensors"), Error);
}

TEST_F(SafetensorsTest, MovedFileKeepsMapping) {
  const std::string p = path();
  SafetensorsWriter w;
  w.add_f32("w", {3}, {1, 2, 3});
  w.write(p);
  SafetensorsFile a(p);
  SafetensorsFile b(std::move(a));
  EXPECT_EQ(b.read_f32("w"), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(b.path(), p);
}

TEST_F(SafetensorsTest, BytesInMemoryReadLikeTheFile) {
  const std::string p = path();
  SafetensorsWriter w;
  w.set_metadata("dim", "3");
  w.add_f32("w", {3}, {1, 2, 3}, StDType::F16);
  w.add_f32("b", {2}, {4, 5});
  w.write(p);
  std::ifstream in(p, std::ios::binary);
  const std::vector<uint8_t> on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint8_t> bytes = w.take_bytes();
  EXPECT_EQ(bytes, on_disk);
  SafetensorsFile a("in memory", bytes);
  SafetensorsFile f = std::move(a);  // a moved vector keeps its buffer: the views stay valid
  EXPECT_EQ(f.path(), "in memory");
  EXPECT_EQ(f.read_f32("w"), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(f.read_f32("b"), (std::vector<float>{4, 5}));
  EXPECT_EQ(f.meta_int("dim"), 3);
  EXPECT_EQ(w.take_bytes().size(), 16u);  // the writer was emptied: length + "{}" padded to 8
  // The same validation as a file, naming the in-memory file.
  bytes.resize(bytes.size() - 4);
  try {
    SafetensorsFile bad("generated model", bytes);
    ADD_FAILURE() << "truncated bytes opened";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "generated model");
  }
  EXPECT_THROW(SafetensorsFile("short", std::vector<uint8_t>(5)), Error);
}

// ---- WeightStore: device uploads --------------------------------------------------------------

class WeightStoreTest : public testing::VulkanTest {
 protected:
  void TearDown() override {
    for (const std::string& p : cleanup_) std::remove(p.c_str());
    VulkanTest::TearDown();
  }
  std::string path() {
    cleanup_.push_back(temp_path());
    return cleanup_.back();
  }
  std::vector<float> download_f32(const Tensor& t) {
    std::vector<float> out(static_cast<size_t>(t.numel()));
    if (t.dtype() == DType::F32) {
      ctx().download(t, out.data(), t.bytes());
    } else {
      std::vector<uint16_t> h(out.size());
      ctx().download(t, h.data(), t.bytes());
      for (size_t i = 0; i < h.size(); ++i) out[i] = half_to_float(h[i]);
    }
    return out;
  }
  std::string load_error(WeightStore& ws, const std::string& name, const Shape& s, DType dt,
                         const std::string& from = {}) {
    try {
      ws.load(name, s, dt, from);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << name << " loaded without error";
    return {};
  }
  std::vector<std::string> cleanup_;
};

TEST_F(WeightStoreTest, ConvertsEveryFloatPair) {
  const std::string p = path();
  const std::vector<float> v = random_floats(3 * 67, 2.f, 4);
  SafetensorsWriter w;
  w.add_f32("f32", {3, 67}, v);
  w.add_f32("f16", {3, 67}, v, StDType::F16);
  w.add_f32("bf16", {3, 67}, v, StDType::BF16);
  w.write(p);
  WeightStore ws(ctx(), p);
  struct Case {
    const char* name;
    DType to;
    float (*expect)(float);
  };
  const Case cases[] = {
      {"f32", DType::F32, [](float x) { return x; }},
      {"f32", DType::F16, [](float x) { return half_to_float(float_to_half(x)); }},
      {"f16", DType::F32, [](float x) { return half_to_float(float_to_half(x)); }},
      {"f16", DType::F16, [](float x) { return half_to_float(float_to_half(x)); }},
      {"bf16", DType::F32, [](float x) { return bf16_to_float(float_to_bf16(x)); }},
      {"bf16", DType::F16, [](float x) { return half_to_float(float_to_half(bf16_to_float(float_to_bf16(x)))); }},
  };
  for (const Case& c : cases) {
    const Tensor t = ws.load(c.name, {3, 67}, c.to);
    ASSERT_EQ(t.dtype(), c.to);
    ASSERT_EQ(t.shape(), Shape({3, 67}));
    EXPECT_EQ(t.name(), c.name);
    const std::vector<float> got = download_f32(t);
    for (size_t i = 0; i < v.size(); ++i)
      ASSERT_EQ(got[i], c.expect(v[i])) << c.name << " -> " << dtype_name(c.to) << " at " << i;
  }
  EXPECT_TRUE(ws.unused().empty());
  EXPECT_EQ(ws.uploaded_bytes(), 3u * 67 * (4 + 2 + 4 + 2 + 4 + 2));
}

// A weight multiplied in parts (the EAGLE drafter's fc): each part is its columns, converted as a
// whole load would be, and asking past the tensor fails naming it.
TEST_F(WeightStoreTest, LoadsColumnParts) {
  const std::string p = path();
  const std::vector<float> v = random_floats(3 * 10, 2.f, 5);
  SafetensorsWriter w;
  w.add_f32("fc", {3, 10}, v, StDType::BF16);
  w.write(p);
  WeightStore ws(ctx(), p);
  const Tensor left = ws.load_columns("fc", {3, 10}, 0, 4, DType::F32, "fc left");
  const Tensor right = ws.load_columns("fc", {3, 10}, 4, 6, DType::F16, "fc right");
  ASSERT_EQ(left.shape(), Shape({3, 4}));
  ASSERT_EQ(right.shape(), Shape({3, 6}));
  EXPECT_EQ(right.name(), "fc right");
  const std::vector<float> l = download_f32(left), r = download_f32(right);
  for (int64_t row = 0; row < 3; ++row)
    for (int64_t c = 0; c < 10; ++c) {
      const float x = bf16_to_float(float_to_bf16(v[static_cast<size_t>(row * 10 + c)]));
      if (c < 4)
        EXPECT_EQ(l[static_cast<size_t>(row * 4 + c)], x) << row << "," << c;
      else
        EXPECT_EQ(r[static_cast<size_t>(row * 6 + c - 4)], half_to_float(float_to_half(x))) << row << "," << c;
    }
  EXPECT_TRUE(ws.unused().empty());
  EXPECT_EQ(ws.uploaded_bytes(), 3u * 4 * 4 + 3u * 6 * 2);
  try {
    ws.load_columns("fc", {3, 10}, 8, 4, DType::F32, "past the end");
    ADD_FAILURE() << "columns past the tensor loaded";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "tensor fc columns [8, 12)");
  }
  try {
    ws.load_columns("fc", {10, 3}, 0, 1, DType::F32, "wrong shape");
    ADD_FAILURE() << "a wrongly shaped tensor loaded";
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "has shape [3, 10], expected [10, 3]");
  }
}

TEST_F(WeightStoreTest, LoadsI32AndReportsUnused) {
  const std::string p = path();
  const int32_t ids[5] = {0, 1, -7, 16383, 42};
  SafetensorsWriter w;
  w.add("ids", StDType::I32, {5}, ids, sizeof ids);
  w.add_f32("extra.head", {2}, {1, 2});
  w.add_f32("conv", {2, 1, 1, 1, 1}, {1, 2});
  w.write(p);
  WeightStore ws(ctx(), p);
  EXPECT_TRUE(ws.has("ids"));
  EXPECT_EQ(ws.shape("ids"), Shape({5}));
  const Tensor t = ws.load("ids", {5}, DType::I32);
  int32_t back[5];
  ctx().download(t, back, sizeof back);
  EXPECT_EQ(std::memcmp(back, ids, sizeof ids), 0);
  EXPECT_EQ(ws.unused(), (std::vector<std::string>{"extra.head", "conv"}));
  EXPECT_THROW(ws.shape("conv"), Error);  // rank 5
}

TEST_F(WeightStoreTest, MissingTensor) {
  const std::string p = path();
  SafetensorsWriter w;
  w.add_f32("norm.weight", {4}, {1, 1, 1, 1});
  w.write(p);
  WeightStore ws(ctx(), p);
  EXPECT_FALSE(ws.has("output.weight"));
  const std::string e = load_error(ws, "output.weight", {16384, 768}, DType::F16, "vocab_size=16384, dim=768");
  EXPECT_CONTAINS(e, p + ": tensor output.weight is missing (expected [16384, 768] from vocab_size=16384, dim=768)");
}

TEST_F(WeightStoreTest, WrongExpectedShape) {
  const std::string p = path();
  SafetensorsWriter w;
  w.add_f32("layers.3.attention.wqkv.weight", {24, 7}, std::vector<float>(24 * 7, 0.5f), StDType::BF16);
  w.write(p);
  WeightStore ws(ctx(), p);
  EXPECT_CONTAINS(load_error(ws, "layers.3.attention.wqkv.weight", {24, 8}, DType::F16, "dim=8"),
                  p + ": tensor layers.3.attention.wqkv.weight has shape [24, 7], expected [24, 8] from dim=8");
  EXPECT_CONTAINS(load_error(ws, "layers.3.attention.wqkv.weight", {168}, DType::F16),
                  "has shape [24, 7], expected [168]");
  EXPECT_EQ(ws.unused().size(), 1u);
}

TEST_F(WeightStoreTest, UnsupportedConversions) {
  const std::string p = path();
  const int32_t ids[2] = {1, 2};
  SafetensorsWriter w;
  w.add("ids", StDType::I32, {2}, ids, sizeof ids);
  w.add_f32("w", {2}, {1, 2});
  w.write(p);
  WeightStore ws(ctx(), p);
  const std::string e1 = load_error(ws, "ids", {2}, DType::F16);
  EXPECT_CONTAINS(e1, p);
  EXPECT_CONTAINS(e1, "tensor ids is I32 and cannot be loaded as f16");
  EXPECT_CONTAINS(load_error(ws, "w", {2}, DType::I32), "tensor w is F32 and cannot be loaded as i32");
}

TEST_F(WeightStoreTest, F16OverflowIsAnError) {
  const std::string p = path();
  SafetensorsWriter w;
  w.add_f32("big", {3}, {1.f, 70000.f, 2.f}, StDType::BF16);
  w.add_f32("inf", {2}, {INFINITY, 1.f});
  w.write(p);
  WeightStore ws(ctx(), p);
  const std::string e = load_error(ws, "big", {3}, DType::F16);
  EXPECT_CONTAINS(e, p + ": tensor big element 1 = ");
  EXPECT_CONTAINS(e, "overflows f16");
  EXPECT_EQ(download_f32(ws.load("big", {3}, DType::F32))[1], bf16_to_float(float_to_bf16(70000.f)));
  // A NaN or infinity already in the file is corruption (no weight we load may hold one): named.
  EXPECT_CONTAINS(load_error(ws, "inf", {2}, DType::F16), p + ": tensor inf element 0 is NaN or Inf");
  EXPECT_CONTAINS(load_error(ws, "inf", {2}, DType::F32), "is NaN or Inf");
}

}  // namespace
}  // namespace vkspec
