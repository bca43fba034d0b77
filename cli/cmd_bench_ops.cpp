// vkspec bench-ops: per op and shape, GPU median time from timestamps next to the CPU reference.
#include "cli/arg_parser.h"
#include "cli/commands.h"
#include "engine/vk/error.h"

namespace vkspec::cli {

int cmd_bench_ops(const Args& args) {
  ArgParser ap("bench-ops", {}, {"--json", "--op", "--repeat"});
  ap.parse(args);
  throw Error("bench-ops: not built yet");
}

}  // namespace vkspec::cli
