#include "engine/checks/op_bench.h"

#include <algorithm>
#include <chrono>

#include <sys/resource.h>

#include "common/error.h"

namespace vkspec {

std::vector<OpBench>& op_benches() {
  static std::vector<OpBench> benches;
  return benches;
}

RegisterOpBench::RegisterOpBench(std::string op, std::string name,
                                 std::function<BenchResult(Context&, int repeat)> run) {
  op_benches().push_back({std::move(op), std::move(name), std::move(run)});
}

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double median_gpu_ms(Context& ctx, int repeat, const std::function<void(CommandStream&)>& record,
                     double* process_cpu_ms) {
  if (!ctx.caps().timestamps) throw Error("benchmark: " + ctx.caps().name + " has no timestamp queries");
  CommandStream s(ctx, /*profile=*/true);
  std::vector<double> ms, cpu;
  for (int i = 0; i <= repeat; ++i) {
    record(s);
    const double c0 = process_cpu_seconds();
    s.submit_and_wait();
    if (i > 0) {
      cpu.push_back((process_cpu_seconds() - c0) * 1e3);
      ms.push_back(s.total_ms());
    }
  }
  if (process_cpu_ms) *process_cpu_ms = median(cpu);
  return median(ms);
}

double median_cpu_ms(int repeat, const std::function<void()>& fn) {
  fn();
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(ms);
}

}  // namespace vkspec
