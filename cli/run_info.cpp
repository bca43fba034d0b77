#include "cli/run_info.h"

#include <ctime>
#include <fstream>

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

}  // namespace vkspec::cli
