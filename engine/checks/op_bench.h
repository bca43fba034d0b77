#pragma once
// A registry of op benchmarks, the timing twin of op_check.h: each op's bench file registers
// shapes with VKSPEC_OP_BENCH and `vkspec bench-ops` runs them. Timing stays out of the tests.
#include <functional>
#include <string>
#include <vector>

#include "engine/checks/op_check.h"  // VKSPEC_CHECK_CONCAT
#include "engine/vk/command_stream.h"
#include "engine/vk/context.h"

namespace vkspec {

struct BenchResult {
  double gpu_ms = 0;  // median over repeats, from command-stream timestamps
  double cpu_ms = 0;  // median of the CPU counterpart, measured in the same run; 0 when none
  double flops = 0;   // floating-point operations per run; 0 for pure data movement
  double bytes = 0;   // bytes read plus bytes written per run, at the minimum the op needs
  // CPU time this process spent while the GPU work ran (median; 0 = not measured). On a CPU
  // device that is the device's own work, which a busy machine does not inflate the way it
  // inflates wall time.
  double gpu_process_cpu_ms = 0;
  std::string kernel;  // what ran on the GPU, e.g. "gemv"
  std::string cpu;     // what ran on the CPU, e.g. "OpenBLAS sgemm"
};

struct OpBench {
  std::string op;    // "matmul", "copy", ...
  std::string name;  // shape, e.g. "f16 1x4096x4096"
  std::function<BenchResult(Context&, int repeat)> run;
};

std::vector<OpBench>& op_benches();

struct RegisterOpBench {
  RegisterOpBench(std::string op, std::string name, std::function<BenchResult(Context&, int repeat)> run);
};

// VKSPEC_OP_BENCH("rms_norm", "rows=3 dim=768", [](Context& ctx, int repeat) { ...; return BenchResult{...}; });
#define VKSPEC_OP_BENCH(op, name, fn) \
  static ::vkspec::RegisterOpBench VKSPEC_CHECK_CONCAT(vkspec_op_bench_, __LINE__)(op, name, fn)

double median(std::vector<double> v);

// User + system time of every thread of this process, which includes a CPU driver's workers.
double process_cpu_seconds();

// Records with `record` into a profiling stream and submits it, once untimed (pipelines get built,
// caches warm) and then `repeat` times; returns the median per-submit sum of command timestamps,
// and in process_cpu_ms (when given) the median CPU time of the process per submit.
// Throws when the device's queue has no timestamps.
double median_gpu_ms(Context& ctx, int repeat, const std::function<void(CommandStream&)>& record,
                     double* process_cpu_ms = nullptr);

// One untimed call, then the median wall time of `repeat` calls.
double median_cpu_ms(int repeat, const std::function<void()>& fn);

}  // namespace vkspec
