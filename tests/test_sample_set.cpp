// Benchmark sample files (eval/sample_set.h, eval/sample_summary.h): what `vkspec bench
// --samples` writes and `--report` merges must round-trip exactly, merge only the same experiment,
// refuse an image counted twice, and summarise to the numbers a single run reports.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "engine/model/safetensors_writer.h"
#include "common/error.h"
#include "eval/sample_set.h"
#include "eval/sample_summary.h"

namespace vkspec {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("vkspec_sample_set_" + name)).string();
}

ImageRecord record(uint64_t seed, int64_t cls, int64_t predicted, int64_t nfe, double wall_ms, int dim = 3) {
  ImageRecord r;
  r.seed = seed;
  r.class_id = cls;
  r.predicted = predicted;
  r.tokens = {static_cast<int32_t>(seed), 1, 2, 3};
  for (int i = 0; i < dim; ++i) r.features.push_back(static_cast<float>(seed) + 0.25f * static_cast<float>(i));
  r.nfe = nfe;
  r.draft_forwards = nfe / 2;
  r.islands = static_cast<int64_t>(seed % 3);
  r.head_forwards = nfe / 3;
  r.stage_ms = {1.5, 0.25, 0, 0.5, static_cast<double>(seed)};
  r.wall_ms = wall_ms;
  r.busy_ms = wall_ms / 2;
  r.device_ms = 0.5;
  r.work = {seed * 10, 2, 3, 4};
  return r;
}

SampleSet set_of(const std::string& method, const std::string& device, std::vector<ImageRecord> images) {
  SampleSet s;
  s.meta = {{"method", method},
            {"options", method == "ar" ? "" : "window=16"},
            {"models", "target=gpt.safetensors#0123"},
            {"sampler", "cfg 2, temperature 1"},
            {"classifier", "cls.safetensors#4567"},
            {"device", device}};
  s.images = std::move(images);
  return s;
}

TEST(sample_set, WriteThenReadGivesBackEveryField) {
  const std::string path = temp_path("roundtrip.safetensors");
  const SampleSet s = set_of("sjd", "llvmpipe", {record(7, 2, 2, 90, 1234.5), record(8, 3, -1, 101, 99.25)});
  write_sample_set(path, s);
  const SampleSet r = read_sample_set(path);
  std::remove(path.c_str());
  EXPECT_EQ(r.meta, s.meta);
  ASSERT_EQ(r.images.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const ImageRecord &a = s.images[i], &b = r.images[i];
    EXPECT_EQ(b.seed, a.seed);
    EXPECT_EQ(b.class_id, a.class_id);
    EXPECT_EQ(b.predicted, a.predicted);
    EXPECT_EQ(b.tokens, a.tokens);
    EXPECT_EQ(b.features, a.features);
    EXPECT_EQ(b.nfe, a.nfe);
    EXPECT_EQ(b.draft_forwards, a.draft_forwards);
    EXPECT_EQ(b.islands, a.islands);
    EXPECT_EQ(b.head_forwards, a.head_forwards);
    ASSERT_EQ(b.stage_ms.size(), a.stage_ms.size());
    for (size_t k = 0; k < a.stage_ms.size(); ++k)
      EXPECT_FLOAT_EQ(static_cast<float>(b.stage_ms[k]), static_cast<float>(a.stage_ms[k]));
    EXPECT_FLOAT_EQ(static_cast<float>(b.wall_ms), static_cast<float>(a.wall_ms));
    EXPECT_FLOAT_EQ(static_cast<float>(b.busy_ms), static_cast<float>(a.busy_ms));
    EXPECT_EQ(b.work.dispatches, a.work.dispatches);
    EXPECT_EQ(b.work.submits, a.work.submits);
  }
  ASSERT_EQ(r.sources.size(), 1u);
  EXPECT_EQ(r.sources[0], path);
}

TEST(sample_set, UnjudgedImagesRoundTripWithoutFeatures) {
  const std::string path = temp_path("unjudged.safetensors");
  SampleSet s = set_of("ar", "llvmpipe", {record(1, 1, -1, 256, 10, 0)});
  s.meta["classifier"] = "none";
  write_sample_set(path, s);
  const SampleSet r = read_sample_set(path);
  std::remove(path.c_str());
  ASSERT_EQ(r.images.size(), 1u);
  EXPECT_TRUE(r.images[0].features.empty());
  EXPECT_EQ(summarize_samples(r).class_accuracy, -1);
}

TEST(sample_set, OtherSafetensorsFilesAreRefusedByName) {
  const std::string path = temp_path("weights.safetensors");
  SafetensorsWriter w;
  w.add_f32("norm.weight", {4}, {1, 1, 1, 1});
  w.write(path);
  try {
    read_sample_set(path);
    FAIL() << "a weights file read as samples";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a vkspec sample file"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(sample_set, ShardsOfOneExperimentMergeAcrossDevicesSortedBySeed) {
  std::vector<SampleSet> sets;
  sets.push_back(set_of("ar", "llvmpipe", {record(5, 5, 5, 256, 10), record(6, 6, 0, 256, 12)}));
  sets.push_back(set_of("sjd", "llvmpipe", {record(0, 0, 0, 90, 5)}));
  sets.push_back(set_of("ar", "NVIDIA H100", {record(0, 0, 0, 256, 1), record(1, 1, 1, 256, 1)}));
  SampleSet other_sampler = set_of("ar", "llvmpipe", {record(0, 0, 0, 256, 1)});
  other_sampler.meta["sampler"] = "cfg 4, temperature 1";
  sets.push_back(other_sampler);
  const std::vector<SampleSet> groups = merge_sample_sets(std::move(sets));
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].meta.at("method"), "ar");
  ASSERT_EQ(groups[0].images.size(), 4u);
  EXPECT_EQ(groups[0].images[0].seed, 0u);
  EXPECT_EQ(groups[0].images[3].seed, 6u);
  EXPECT_EQ(groups[0].meta.at("device"), "llvmpipe; NVIDIA H100");
  EXPECT_EQ(groups[1].meta.at("method"), "sjd");
  EXPECT_EQ(groups[2].meta.at("sampler"), "cfg 4, temperature 1");
}

TEST(sample_set, ASeedInTwoShardsIsAnErrorNamingBothFiles) {
  std::vector<SampleSet> sets;
  sets.push_back(set_of("ar", "llvmpipe", {record(3, 3, 3, 256, 10)}));
  sets.back().sources = {"a.safetensors"};
  sets.push_back(set_of("ar", "llvmpipe", {record(4, 4, 4, 256, 10), record(3, 3, 3, 256, 10)}));
  sets.back().sources = {"b.safetensors"};
  try {
    merge_sample_sets(std::move(sets));
    FAIL() << "a duplicated seed merged";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("seed 3"), std::string::npos) << m;
    EXPECT_NE(m.find("a.safetensors"), std::string::npos) << m;
    EXPECT_NE(m.find("b.safetensors"), std::string::npos) << m;
  }
}

TEST(sample_set, SummaryOfShardsEqualsSummaryOfTheWhole) {
  std::vector<ImageRecord> all;
  for (uint64_t s = 0; s < 9; ++s)
    all.push_back(record(s, static_cast<int64_t>(s % 3), s % 4 == 0 ? 0 : static_cast<int64_t>(s % 3),
                         60 + static_cast<int64_t>(s), 100.0 + 10.0 * static_cast<double>(s)));
  const SampleSummary whole = summarize_samples(set_of("sjd", "x", all));
  std::vector<SampleSet> shards;
  shards.push_back(set_of("sjd", "x", {all.begin() + 5, all.end()}));
  shards.push_back(set_of("sjd", "y", {all.begin(), all.begin() + 5}));
  const std::vector<SampleSet> merged = merge_sample_sets(std::move(shards));
  ASSERT_EQ(merged.size(), 1u);
  const SampleSummary parts = summarize_samples(merged[0]);
  EXPECT_EQ(parts.images, 9);
  EXPECT_DOUBLE_EQ(parts.nfe_mean, whole.nfe_mean);
  EXPECT_DOUBLE_EQ(parts.nfe_mean, 64.0);
  EXPECT_DOUBLE_EQ(parts.latency_median, 140.0);
  EXPECT_DOUBLE_EQ(parts.latency_p90, whole.latency_p90);
  EXPECT_DOUBLE_EQ(parts.accepted_length_mean, whole.accepted_length_mean);
  // Seeds 0, 4, 8 are predicted as class 0; their classes are 0, 1, 2: 7 of 9 right.
  EXPECT_DOUBLE_EQ(parts.class_accuracy, 7.0 / 9.0);
  EXPECT_EQ(parts.features, whole.features);
  EXPECT_EQ(parts.feature_dim, 3);
  EXPECT_EQ(parts.work.dispatches, whole.work.dispatches);
}

TEST(sample_set, FileIdentityFollowsContentsNotFolder) {
  const std::string a = temp_path("ident_a.bin"), b = temp_path("ident_b.bin");
  std::ofstream(a, std::ios::binary) << std::string(3 << 20, 'x');
  std::ofstream(b, std::ios::binary) << std::string(3 << 20, 'x') << 'y';
  const std::string ia = file_identity(a), ib = file_identity(b);
  EXPECT_EQ(ia.substr(0, ia.find('#')), "vkspec_sample_set_ident_a.bin");
  EXPECT_NE(ia.substr(ia.find('#')), ib.substr(ib.find('#')));
  EXPECT_EQ(file_identity(a), ia);
  std::remove(a.c_str());
  std::remove(b.c_str());
  EXPECT_THROW(file_identity(a), Error);
}

}  // namespace
}  // namespace vkspec
