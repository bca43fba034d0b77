#pragma once
// Where and when a benchmark ran, for its JSON: device, driver, UTC date, load average and the
// thread-count variables that change CPU timings. Shared by bench-ops and bench --synthetic.
#include <nlohmann/json.hpp>

#include "engine/vk/context.h"

namespace vkspec::cli {

// 1-minute load average (Linux), or -1: timings on CPU devices mean little on a busy machine.
double load_average();

// {"device", "driver", "date", "load_average", "env": {OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, LP_NUM_THREADS}}
nlohmann::json run_info(const Context& ctx);

// On lavapipe, how it runs each dispatch: "N worker threads" or "inline on the queue thread"
// (LP_NUM_THREADS=0), with the setting it came from; "" on every other driver. Timings depend on it
// more than on anything else there (docs/perf.md, "lavapipe's worker threads").
std::string lavapipe_threads(const DeviceCaps& caps);

}  // namespace vkspec::cli
