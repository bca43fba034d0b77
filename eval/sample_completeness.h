#pragma once
// Whether merged sample files hold every image their commands were asked for. Each bench command
// records in its sample files the seeds of the whole run it belongs to (meta "run_seeds",
// "FIRST+IMAGES", with " shards N" when it made one of N shards of it: the same text in every
// shard's file), so `bench --report` can name
// the seeds, and the shards, that are missing, even those of a shard that never wrote a file
// (its siblings' files say which run it belonged to). Files written before the key existed say
// nothing and are taken as complete.
#include <cstdint>
#include <string>
#include <vector>

#include "common/shard.h"
#include "eval/sample_set.h"

namespace vkspec {

// The "run_seeds" value of a command that makes a shard of `shards` of a run of `images` images
// from `first` (shards = 1: the whole run).
std::string run_seeds_text(uint64_t first, int64_t images, int64_t shards);

struct Completeness {
  int64_t expected = 0;  // seeds the commands were asked for (0: no file said)
  int64_t missing = 0;
  std::string missing_seeds;       // "50-99 (shard 1/3), 120 (shard 2/3)"; at most a few ranges
  std::vector<std::string> rerun;  // what to run again: "shard 1/3" or "--seed 0 --images 10"
  bool complete() const { return missing == 0; }
};

// A merged set (merge_sample_sets) against the "run_seeds" of its files; throws Error naming the
// set when a value cannot be read.
Completeness completeness(const SampleSet& merged);

}  // namespace vkspec
