// --shard I/N (common/shard.h) and the completeness check of merged sample files
// (eval/sample_completeness.h): the shards of a run cover its images exactly once, in order, and a
// merge of shards names the seeds and the shards that are missing.
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "common/shard.h"
#include "eval/sample_completeness.h"
#include "eval/sample_set.h"

namespace vkspec {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_shard(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(shard, ParsesIndexOverCount) {
  const Shard s = parse_shard("3/100");
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 100);
  EXPECT_EQ(s.str(), "3/100");
  EXPECT_FALSE(parse_shard("0/1").sharded());
}

TEST(shard, BadValuesAreErrorsNamingTheOptionAndTheValue) {
  for (const std::string bad : {"", "3", "/3", "3/", "a/3", "1/b", "-1/3", "1/-3", "+1/3", " 1/3", "1/3 ", "1/0", "0/0",
                                "1/2/3", "0/1000001", "99999999999/3"}) {
    const std::string m = error_of(bad);
    EXPECT_NE(m.find("--shard"), std::string::npos) << "'" << bad << "': " << m;
    EXPECT_NE(m.find("'" + bad + "'"), std::string::npos) << "'" << bad << "': " << m;
  }
  const std::string past = error_of("3/3");
  EXPECT_NE(past.find("0..2"), std::string::npos) << past;
}

TEST(shard, BlocksCoverTheRunOnceInOrderAndDifferByAtMostOne) {
  for (int64_t images : {1, 2, 3, 7, 10, 50000, 99991})
    for (int64_t count : {1, 2, 3, 7, 10, 100})
      if (count <= images) {
        int64_t next = 0, smallest = images, largest = 0;
        for (int64_t i = 0; i < count; ++i) {
          const ImageBlock b = shard_block(images, {i, count});
          EXPECT_EQ(b.begin, next) << images << " images, shard " << i << "/" << count;
          next = b.end;
          smallest = std::min(smallest, b.size());
          largest = std::max(largest, b.size());
          for (int64_t k : {b.begin, b.end - 1}) EXPECT_EQ(shard_of_image(k, images, count), i) << k;
        }
        EXPECT_EQ(next, images);
        EXPECT_GE(smallest, 1);
        EXPECT_LE(largest - smallest, 1);
      }
}

ImageRecord image(uint64_t seed) {
  ImageRecord r;
  r.seed = seed;
  r.tokens = {1, 2, 3, 4};
  return r;
}

SampleSet shard_file(int64_t index, int64_t count, int64_t images, uint64_t first, bool partial = false) {
  SampleSet s;
  s.meta = {{"method", "ar"},
            {"options", ""},
            {"models", "target=gpt#1"},
            {"sampler", "cfg 2"},
            {"classifier", "none"},
            {"device", "llvmpipe"},
            {"run_seeds", run_seeds_text(first, images, count)}};
  const ImageBlock b = shard_block(images, {index, count});
  for (int64_t k = b.begin; k < (partial ? b.begin + 1 : b.end); ++k)
    s.images.push_back(image(first + static_cast<uint64_t>(k)));
  s.sources = {"shard" + std::to_string(index) + ".safetensors"};
  return s;
}

TEST(sample_completeness, AllShardsMergeComplete) {
  std::vector<SampleSet> sets;
  for (int64_t i = 0; i < 3; ++i) sets.push_back(shard_file(i, 3, 10, 100));
  const std::vector<SampleSet> groups = merge_sample_sets(std::move(sets));
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].meta.at("run_seeds"), "100+10 shards 3");  // the shards' text, once
  const Completeness c = completeness(groups[0]);
  EXPECT_TRUE(c.complete());
  EXPECT_EQ(c.expected, 10);
}

TEST(sample_completeness, AMissingAndAHalfDoneShardAreNamed) {
  // Shard 1 of 4 never wrote a file; shard 3 stopped after its first image.
  std::vector<SampleSet> sets = {shard_file(0, 4, 10, 0), shard_file(2, 4, 10, 0), shard_file(3, 4, 10, 0, true)};
  const std::vector<SampleSet> groups = merge_sample_sets(std::move(sets));
  ASSERT_EQ(groups.size(), 1u);
  const Completeness c = completeness(groups[0]);
  EXPECT_EQ(c.expected, 10);
  EXPECT_EQ(c.missing, 3 + 2);  // blocks 0-1, 2-4, 5-6, 7-9
  EXPECT_EQ(c.missing_seeds, "2-4 (shard 1/4), 8-9 (shard 3/4)");
  EXPECT_EQ(c.rerun, (std::vector<std::string>{"shard 1/4", "shard 3/4"}));
}

TEST(sample_completeness, UnshardedCommandsAndOldFiles) {
  SampleSet one = shard_file(0, 1, 5, 20, false);
  one.images.pop_back();  // seed 24 missing
  const Completeness c = completeness(merge_sample_sets({one})[0]);
  EXPECT_EQ(c.missing_seeds, "24 (--seed 20 --images 5)");
  SampleSet old = one;
  old.meta.erase("run_seeds");  // written before run_seeds existed: nothing to check against
  EXPECT_TRUE(completeness(merge_sample_sets({old})[0]).complete());
  SampleSet bad = one;
  bad.meta["run_seeds"] = "20+x";
  EXPECT_THROW(completeness(bad), Error);
}

}  // namespace
}  // namespace vkspec
