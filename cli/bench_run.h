#pragma once
// A live bench's generation (cli/bench_plan.h says what it runs): one worker per --devices entry
// with its own copy of the models (cli/device_pool.h), each run's sample file under --samples
// checked and resumed, untimed warm-up images, then the timed images, interleaved over the runs by
// default, judged by worker 0 in the judge's batches and saved as they finish (also when a worker
// fails), and at the end each run's summary, memory and --npz/--out-dir files.
#include <vector>

#include "cli/bench_plan.h"
#include "cli/bench_report.h"
#include "eval/reference_stats.h"
#include "frontend/arg_parser.h"

namespace vkspec::cli {

// What cli/bench_report.h reports.
struct LiveBenchResults {
  std::vector<RunResult> results;  // in the plan's order
  ReportHeader header;
  ReferenceSet reference;  // the test set's statistics; none with --classifier none or --dataset none
};

// ap: the model files (--classifier among them), --dataset, --devices and the sampler settings.
LiveBenchResults run_bench(const frontend::ArgParser& ap, const BenchPlan& plan);

}  // namespace vkspec::cli
