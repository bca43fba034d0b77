// vkspec devices: the capability record of every Vulkan device.
#include <iostream>

#include "cli/commands.h"
#include "engine/ops/matmul_tiles.h"
#include "engine/vk/instance.h"
#include "frontend/arg_parser.h"

namespace vkspec::cli {

frontend::OptionTable devices_options() { return {{"--json", "", "print the capability records as JSON"}}; }

int cmd_devices(const Args& args) {
  frontend::ArgParser ap("devices", devices_options());
  ap.parse(args);
  Instance instance;
  const auto& devs = instance.devices();
  if (ap.flag("--json")) {
    std::cout << "[";
    for (size_t i = 0; i < devs.size(); ++i) std::cout << (i ? ",\n " : "") << devs[i].to_json();
    std::cout << "]\n";
    return 0;
  }
  if (devs.empty()) {
    std::cout << "No Vulkan devices. Install a driver (mesa-vulkan-drivers gives lavapipe on the CPU).\n";
    return 1;
  }
  const uint32_t preferred = instance.preferred_device();
  for (const auto& d : devs) {
    std::cout << d.to_text();
    std::cout << "  matmul table      " << ops::matmul_tiles_summary(d) << "\n";
    if (d.index == preferred) std::cout << "  (default device)\n";
    std::cout << "\n";
  }
  return 0;
}

}  // namespace vkspec::cli
