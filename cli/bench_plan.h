#pragma once
// What a live `vkspec bench` will run, read from its options before any model loads, so that a bad
// option fails in a second: the runs (each method with the options it knows, once per value of a
// --sweep), this command's seeds (its --shard of the run's), the warm-up, the order, and where
// sample records and images go. Also how a run is named in tables, logs and file names.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/sample_outputs.h"
#include "common/shard.h"
#include "frontend/arg_parser.h"
#include "frontend/model_loading.h"

namespace vkspec::cli {

struct BenchPlan {
  std::vector<frontend::MethodRun> runs;
  // --images and --seed: the whole run's, of all shards together.
  int64_t run_images = 0;
  uint64_t run_seed = 0;
  Shard shard;
  // This command's share: images seed, seed + 1, ..., seed + images - 1 (the whole run's without --shard).
  uint64_t seed = 0;
  int64_t images = 0;
  int64_t warmup = -1;                        // untimed images per run first; -1: auto (see the option's help)
  std::string order;                          // "interleaved" or "sequential"
  std::string samples_dir;                    // --samples: where each run's records are kept and resumed ("": nowhere)
  bool profile = false;                       // --profile: GPU timestamps around every command of every step
  bool iterations = false;                    // --iterations
  SampleOutputs outputs;                      // --npz, --out-dir
  std::vector<SampleOutputs> outputs_of_run;  // each run's own file and folder of them
};

// The plan of a live bench (not --report), every option checked; throws Error naming the option.
BenchPlan plan_bench(const frontend::ArgParser& ap);

// "a=1,b=2", with "batch=B" for a batched run ("" for neither).
std::string run_options_text(const frontend::MethodRun& run);
// "method" or "method a=1,b=2".
std::string run_label(const frontend::MethodRun& run);
// A run in file names: "sjd_window=16" (no folder separators or spaces).
std::string run_file_name(const frontend::MethodRun& run);

}  // namespace vkspec::cli
