#include "cli/run_info.h"

#include <cstdlib>
#include <ctime>
#include <fstream>

namespace vkspec::cli {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace

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
           {{"OPENBLAS_NUM_THREADS", env_or("OPENBLAS_NUM_THREADS", "")},
            {"OMP_NUM_THREADS", env_or("OMP_NUM_THREADS", "")},
            {"LP_NUM_THREADS", env_or("LP_NUM_THREADS", "")}}}};
}

}  // namespace vkspec::cli
