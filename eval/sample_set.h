#pragma once
// The per-image records of a benchmark run, kept on disk so that one evaluation can be resumed
// after an interruption, split over processes, sessions or machines, and merged into one table
// (`vkspec bench --samples DIR`, `vkspec bench --report DIR`). Quality numbers need 1000 images
// and more per method, which on a CPU device is hours: no single process has to live that long.
//
// One safetensors file per run: tensors with one row per image (seed, class, tokens, features,
// forwards, timings, work counters) and metadata saying what was run (method, options, the models
// by content hash, the sampler, the classifier, the kernels' rounding where it changed: see
// engine/ops/kernel_rounding.h) and which seeds the whole run was to have
// (eval/sample_completeness.h). Files whose metadata agree in everything but the device and those
// seeds are the same experiment and merge; a seed in two of them is an error.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/vk/context.h"

namespace vkspec {

struct ImageRecord {
  uint64_t seed = 0;
  int64_t class_id = 0;
  int64_t predicted = -1;       // the classifier's class; -1 when not judged
  std::vector<int32_t> tokens;  // the image, raster order
  std::vector<float> features;  // the classifier's features; empty when not judged
  int64_t nfe = 0, draft_forwards = 0, islands = 0;
  int64_t head_forwards = 0;  // draft-head runs (files before 2026-11-25: 0)
  double wall_ms = 0, busy_ms = 0, device_ms = 0;
  // device_ms split by what the work was for, in kStages order (zeros without timestamps).
  std::vector<double> stage_ms = std::vector<double>(kStageCount, 0.0);
  WorkCounters work;

  // What device time is split into (decoding's stages): target, drafter, low_res, heads, sampling.
  static constexpr int kStageCount = 5;
  static const char* const kStages[kStageCount];
};

struct SampleSet {
  // What was run. Keys: method, options ("a=1,b=2"), models ("target=NAME#HASH;..."), sampler,
  // classifier ("NAME#HASH" or "none"), device, run_seeds ("FIRST+IMAGES [shards N]", absent in
  // files before it). Everything but the device and run_seeds identifies the experiment.
  std::map<std::string, std::string> meta;
  std::vector<ImageRecord> images;
  std::vector<std::string> sources;  // the files it was read from (messages)
};

// Writes path.tmp and renames it over path. Throws Error naming the path.
void write_sample_set(const std::string& path, const SampleSet& set);
// Throws Error naming the file when it is not a sample file or its tensors disagree in size.
SampleSet read_sample_set(const std::string& path);

// The metadata that must agree for two sets to merge: all of it but the device and run_seeds.
std::string sample_set_key(const SampleSet& set);
// Groups by key, in order of first appearance; within a group images are sorted by seed, and
// devices and run_seeds listed, each once ("llvmpipe; NVIDIA H100" when they differ). Throws Error naming the seed and
// both files when a seed occurs twice in one group.
std::vector<SampleSet> merge_sample_sets(std::vector<SampleSet> sets);

// "NAME#HASH": the file's name (without its folder, so checkouts in other places agree) and a hash
// of its whole contents: how a sample file records every model (throws Error naming the file when
// it cannot be read).
std::string file_identity(const std::string& path);

}  // namespace vkspec
