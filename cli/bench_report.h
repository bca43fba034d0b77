#pragma once
// Bench's report, the same for a live run and for --report: each run's speedup and quality against
// ar, the speed table, the overheads, the quality table with intervals (cli/quality_table.h), the
// --iterations and --profile tables, and the JSON (--json).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/kernel_table.h"
#include "decoding/iteration_stats.h"
#include "engine/vk/memory_report.h"
#include "eval/reference_stats.h"
#include "eval/run_quality.h"
#include "eval/sample_set.h"
#include "eval/sample_summary.h"
#include "frontend/model_loading.h"

namespace vkspec::cli {

struct RunResult {
  frontend::MethodRun run;
  SampleSet samples;  // every image of the run (this process's and, with --samples, earlier ones)
  SampleSummary sum;
  double speedup = 0;
  RunQuality quality;         // FID, KID, intervals, differences against ar
  bool memory_known = false;  // generated in this process
  MemoryReport memory;        // after the run
  KernelProfile kernels;      // --profile: GPU time by kernel of the images generated here
  // Images generated here per second of wall-clock over all devices together (-1: none generated
  // here). What --devices buys; latency and speedup are per image, timed on its own device.
  double images_per_s = -1;
  // --iterations, Jacobi window methods: per-iteration statistics of the images generated here.
  std::optional<IterationStats> iterations;
};

struct ReportHeader {
  std::string device, model, sampler;
  std::string device_note;  // a live run's lavapipe threads (cli/run_info.h)
  int64_t image_tokens = 0;
  bool profile = false;
  size_t workers = 1;    // --devices: how many generated at once
  nlohmann::json extra;  // JSON fields of the live run (drafter)
};

// v printed with fmt, "-" when not measured (negative).
std::string measured_cell(double v, const char* fmt);

// Speedups, quality against the test set and against ar's samples, the tables and the JSON (to
// json_path when given).
void report_runs(std::vector<RunResult>& results, const ReportHeader& h, const ReferenceSet& reference_set,
                 const QualityOptions& quality, const std::optional<std::string>& json_path);

}  // namespace vkspec::cli
