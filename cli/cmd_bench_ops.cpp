// vkspec bench-ops: per op and shape, GPU median time from timestamps next to the CPU reference.
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output_path.h"
#include "cli/run_info.h"
#include "common/error.h"
#include "engine/checks/op_bench.h"
#include "engine/ref/matmul_ref.h"
#include "frontend/arg_parser.h"
#include "frontend/device_choice.h"

namespace vkspec::cli {
namespace {

// Rate in units of 1e9 per second; 0 when there is no amount or no time.
double giga_per_s(double amount, double ms) { return amount > 0 && ms > 0 ? amount / (ms * 1e6) : 0; }

}  // namespace

frontend::OptionTable bench_ops_options() {
  return {{"--json", "FILE", "also write every row as JSON"},
          {"--op", "NAME",
           "time only this op (the *-sweep ops, grids of kernel variants for tuning a device, run "
           "only when named)"},
          {"--repeat", "N", "runs per case, the median is shown (default 10)"}};
}

int cmd_bench_ops(const Args& args) {
  frontend::ArgParser ap("bench-ops", bench_ops_options());
  ap.parse(args);
  const int repeat = static_cast<int>(ap.get_int("--repeat", 10, 1, 100000));
  const std::string only = ap.get_or("--op", "");
  if (auto path = ap.get("--json")) check_output_path(*path, "--json");
  auto wanted = [&](const OpBench& b) {
    const bool sweep = b.op.size() > 6 && b.op.compare(b.op.size() - 6, 6, "-sweep") == 0;
    return only.empty() ? !sweep : b.op == only;
  };
  size_t selected = 0;
  for (const auto& b : op_benches()) selected += wanted(b);
  if (!selected) throw Error("bench-ops: no benchmark for op '" + only + "'");

  auto ctx = frontend::open_device();
  nlohmann::json out = run_info(*ctx);
  const double load = out["load_average"];
  out["repeat"] = repeat;
  out["openblas_threads"] = ref::blas_threads();
  out["rows"] = nlohmann::json::array();
  std::printf("device %s, median of %d runs, OpenBLAS threads %d, load average %.2f\n", ctx->caps().name.c_str(),
              repeat, ref::blas_threads(), load);
  std::printf("GB/s counts bytes read + written; GPU/CPU = CPU time / GPU time (above 1: the GPU is faster);\n"
              "busy ms = CPU time this process used during the GPU runs (on a CPU device, the device's work)\n\n");
  std::printf("%-8s %-20s %-9s %10s %9s %8s %9s %10s %9s %8s  %s\n", "op", "case", "kernel", "GPU ms", "GFLOP/s",
              "GB/s", "busy ms", "CPU ms", "GFLOP/s", "GPU/CPU", "CPU runs");
  int failed = 0;
  for (const auto& b : op_benches()) {
    if (!wanted(b)) continue;
    BenchResult r;
    try {
      r = b.run(*ctx, repeat);
    } catch (const std::exception& e) {
      std::printf("%-8s %-20s error: %s\n", b.op.c_str(), b.name.c_str(), e.what());
      out["rows"].push_back({{"op", b.op}, {"case", b.name}, {"error", e.what()}});
      ++failed;
      continue;
    }
    const double gflops = giga_per_s(r.flops, r.gpu_ms), gbps = giga_per_s(r.bytes, r.gpu_ms);
    const double cpu_gflops = giga_per_s(r.flops, r.cpu_ms);
    const double speed = r.cpu_ms > 0 && r.gpu_ms > 0 ? r.cpu_ms / r.gpu_ms : 0;
    std::printf("%-8s %-20s %-9s %10.3f %9.2f %8.2f %9.2f %10.3f %9.2f %8.2f  %s\n", b.op.c_str(), b.name.c_str(),
                r.kernel.c_str(), r.gpu_ms, gflops, gbps, r.gpu_process_cpu_ms, r.cpu_ms, cpu_gflops, speed,
                r.cpu.c_str());
    std::fflush(stdout);
    out["rows"].push_back({{"op", b.op},
                           {"case", b.name},
                           {"kernel", r.kernel},
                           {"gpu_ms", r.gpu_ms},
                           {"gpu_gflops", gflops},
                           {"gpu_gbps", gbps},
                           {"gpu_process_cpu_ms", r.gpu_process_cpu_ms},
                           {"flops", r.flops},
                           {"bytes", r.bytes},
                           {"cpu", r.cpu},
                           {"cpu_ms", r.cpu_ms},
                           {"cpu_gflops", cpu_gflops},
                           {"cpu_gbps", giga_per_s(r.bytes, r.cpu_ms)},
                           {"gpu_speedup_over_cpu", speed}});
  }
  if (auto path = ap.get("--json")) {
    write_json_file(*path, out, "bench-ops");
  }
  return failed ? 1 : 0;
}

}  // namespace vkspec::cli
