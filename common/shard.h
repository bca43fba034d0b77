#pragma once
// --shard i/N: which share of a run's images one process makes, so that N processes (a Slurm job
// array, a Kubernetes Indexed Job, local processes) together make exactly the images of the one
// process run, seed for seed. Shard i takes the contiguous block of images
// [floor(i * n / N), floor((i + 1) * n / N)) of the run's n images: blocks differ in size by at
// most one, each shard's images are one seed range (one sample file per run and shard, resumable
// as any --seed range is), and shards merged in index order are the run in seed order.
#include <cstdint>
#include <string>

namespace vkspec {

struct Shard {
  int64_t index = 0, count = 1;  // 0 <= index < count

  bool sharded() const { return count > 1; }
  std::string str() const { return std::to_string(index) + "/" + std::to_string(count); }  // "3/100"
};

// Parses "i/N" (0 <= i < N <= kMaxShards, decimal digits only); throws Error naming `what` (the
// option) and the text otherwise.
constexpr int64_t kMaxShards = 1000000;
Shard parse_shard(const std::string& text, const std::string& what = "--shard");

// The images [begin, end) of a run of `images` images that `shard` makes.
struct ImageBlock {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};
ImageBlock shard_block(int64_t images, const Shard& shard);
// The shard (of `count`) that makes image k of a run of `images` images: the inverse of shard_block.
int64_t shard_of_image(int64_t k, int64_t images, int64_t count);

}  // namespace vkspec
