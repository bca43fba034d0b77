#include "cli/run_info.h"

#include <ctime>
#include <fstream>
#include <thread>

#include "common/env.h"

namespace vkspec::cli {

double load_average() {
  std::ifstream f("/proc/loadavg");
  double v = -1;
  if (!(f >> v)) return -1;
  return v;
}

nlohmann::json run_info(const Context& ctx) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {{"device", ctx.caps().name},
          {"driver", ctx.caps().driver_info},
          {"date", stamp},
          {"load_average", load_average()},
          {"env",
           {{"OPENBLAS_NUM_THREADS", env::external("OPENBLAS_NUM_THREADS").value_or("")},
            {"OMP_NUM_THREADS", env::external("OMP_NUM_THREADS").value_or("")},
            {"LP_NUM_THREADS", env::external("LP_NUM_THREADS").value_or("")}}}};
}

std::string lavapipe_threads(const DeviceCaps& caps) {
  if (!caps.cpu_driver || caps.name.rfind("llvmpipe", 0) != 0) return "";
  const std::optional<std::string> set = env::external("LP_NUM_THREADS");
  if (set && !set->empty()) {
    if (*set == "0") return "lavapipe runs dispatches inline on its queue thread (LP_NUM_THREADS=0)";
    return "lavapipe hands each dispatch to " + *set + " worker threads (LP_NUM_THREADS=" + *set + ")";
  }
  // Mesa's default: one worker per CPU the process may run on.
  return "lavapipe hands each dispatch to " + std::to_string(std::thread::hardware_concurrency()) +
         " worker threads (LP_NUM_THREADS unset: one per CPU; 0 runs them inline)";
}

}  // namespace vkspec::cli
