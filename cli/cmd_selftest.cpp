// vkspec selftest: every op against the CPU reference on one or all devices, as an op x device
// matrix of normalised errors. The same checks run under CTest.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "common/error.h"
#include "engine/checks/op_check.h"
#include "frontend/arg_parser.h"

namespace vkspec::cli {

frontend::OptionTable selftest_options() {
  return {{"--device", "N|all",
           "the device to check (see vkspec devices), or every device (default: the preferred one)"},
          {"--op", "NAME", "check only this op"}};
}

int cmd_selftest(const Args& args) {
  frontend::ArgParser ap("selftest", selftest_options());
  ap.parse(args);
  auto instance = std::make_shared<Instance>();
  if (instance->devices().empty()) throw Error("no Vulkan device found");
  std::vector<uint32_t> devices;
  const std::string dev = ap.get_or("--device", "");
  if (dev == "all") {
    for (const auto& d : instance->devices()) devices.push_back(d.index);
  } else if (dev.empty()) {
    devices.push_back(instance->preferred_device());
  } else {
    devices.push_back(static_cast<uint32_t>(
        ap.get_int("--device", 0, 0, static_cast<long long>(instance->devices().size()) - 1)));
  }
  const std::string only = ap.get_or("--op", "");

  std::vector<std::vector<CheckResult>> results(devices.size());
  std::vector<std::string> errors(devices.size());
  size_t failed = 0, ran = 0;
  for (size_t d = 0; d < devices.size(); ++d) {
    std::unique_ptr<Context> ctx;
    try {
      ctx = std::make_unique<Context>(instance, devices[d]);
    } catch (const std::exception& e) {
      errors[d] = e.what();
    }
    for (const auto& c : op_checks()) {
      if (!only.empty() && c.op != only) continue;
      CheckResult r;
      if (!ctx) {
        r.error = NAN;
        r.detail = "no context";
      } else {
        try {
          r = c.run(*ctx);
        } catch (const std::exception& e) {
          r.error = NAN;
          r.detail = e.what();
        }
      }
      if (!r.pass()) ++failed;
      ++ran;
      results[d].push_back(r);
    }
  }

  int op_width = 12;  // the longest op name (rope_2d_kv_write) sets the column
  for (const auto& c : op_checks()) op_width = std::max(op_width, static_cast<int>(c.op.size()));
  std::printf("%-*s %-40s", op_width, "op", "case");
  for (uint32_t d : devices) std::printf(" | %-24.24s", instance->devices()[d].name.c_str());
  std::printf("\n");
  size_t row = 0;
  for (const auto& c : op_checks()) {
    if (!only.empty() && c.op != only) continue;
    std::printf("%-*s %-40.40s", op_width, c.op.c_str(), c.name.c_str());
    for (size_t d = 0; d < devices.size(); ++d) {
      const CheckResult& r = results[d][row];
      std::printf(" | %-4s err %-8.2e tol %-5.0e", r.pass() ? "ok" : "FAIL", r.error, r.tolerance);
    }
    std::printf("\n");
    for (size_t d = 0; d < devices.size(); ++d)
      if (!results[d][row].pass() && !results[d][row].detail.empty())
        std::printf("    device %u: %s\n", devices[d], results[d][row].detail.c_str());
    ++row;
  }
  for (size_t d = 0; d < devices.size(); ++d)
    if (!errors[d].empty()) std::printf("device %u: %s\n", devices[d], errors[d].c_str());
  std::printf("%zu passed, %zu failed\n", ran - failed, failed);
  return failed ? 1 : 0;
}

}  // namespace vkspec::cli
