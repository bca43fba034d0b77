// vkspec selftest: every op against the CPU reference on one or all devices, as an op x device
// matrix of normalised errors (printed, and with --json written as a file for docs/devices/). The
// same checks run under CTest.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output_path.h"
#include "common/error.h"
#include "engine/checks/op_check.h"
#include "frontend/arg_parser.h"

namespace vkspec::cli {
namespace {

// One device's column: its results in op_checks() order (only the selected ops), or the reason
// no context could be made on it (then no results: one line says why instead of a failed row each).
struct DeviceColumn {
  uint32_t index = 0;
  std::string context_error;
  std::vector<CheckResult> results;
};

std::vector<uint32_t> selected_devices(const frontend::ArgParser& ap, const Instance& instance) {
  const std::string dev = ap.get_or("--device", "");
  std::vector<uint32_t> devices;
  if (dev == "all") {
    for (const auto& d : instance.devices()) devices.push_back(d.index);
  } else if (dev.empty()) {
    devices.push_back(instance.preferred_device());
  } else {
    devices.push_back(static_cast<uint32_t>(ap.get_int("--device", 0, 0,
                                                       static_cast<long long>(instance.devices().size()) - 1)));
  }
  return devices;
}

DeviceColumn run_checks(const std::shared_ptr<Instance>& instance, uint32_t index, const std::string& only) {
  DeviceColumn col;
  col.index = index;
  std::unique_ptr<Context> ctx;
  try {
    ctx = std::make_unique<Context>(instance, index);
  } catch (const std::exception& e) {
    col.context_error = e.what();
    return col;
  }
  for (const auto& c : op_checks()) {
    if (!only.empty() && c.op != only) continue;
    CheckResult r;
    try {
      r = c.run(*ctx);
    } catch (const std::exception& e) {
      r.error = NAN;
      r.detail = e.what();
    }
    col.results.push_back(r);
  }
  return col;
}

const char* status(const CheckResult& r) { return r.skipped ? "skip" : r.pass() ? "ok" : "FAIL"; }

void print_matrix(const Instance& instance, const std::vector<DeviceColumn>& cols, const std::string& only) {
  int op_width = 12;  // the longest op name (rope_2d_kv_write) sets the column
  for (const auto& c : op_checks()) op_width = std::max(op_width, static_cast<int>(c.op.size()));
  std::printf("%-*s %-40s", op_width, "op", "case");
  for (const DeviceColumn& col : cols) std::printf(" | %-24.24s", instance.devices()[col.index].name.c_str());
  std::printf("\n");
  size_t row = 0;
  for (const auto& c : op_checks()) {
    if (!only.empty() && c.op != only) continue;
    std::printf("%-*s %-40.40s", op_width, c.op.c_str(), c.name.c_str());
    for (const DeviceColumn& col : cols) {
      if (!col.context_error.empty()) {
        std::printf(" | %-24s", "-");
        continue;
      }
      const CheckResult& r = col.results[row];
      std::printf(" | %-4s err %-8.2e tol %-5.0e", status(r), r.error, r.tolerance);
    }
    std::printf("\n");
    for (const DeviceColumn& col : cols)
      if (col.context_error.empty() && !col.results[row].pass() && !col.results[row].detail.empty())
        std::printf("    device %u: %s\n", col.index, col.results[row].detail.c_str());
    ++row;
  }
}

nlohmann::json matrix_json(const Instance& instance, const std::vector<DeviceColumn>& cols, const std::string& only) {
  nlohmann::json j;
  j["devices"] = nlohmann::json::array();
  for (const DeviceColumn& col : cols) {
    nlohmann::json d = nlohmann::json::parse(instance.devices()[col.index].to_json());
    if (!col.context_error.empty()) d["context_error"] = col.context_error;
    j["devices"].push_back(d);
  }
  j["checks"] = nlohmann::json::array();
  size_t row = 0;
  for (const auto& c : op_checks()) {
    if (!only.empty() && c.op != only) continue;
    nlohmann::json results = nlohmann::json::array();
    for (const DeviceColumn& col : cols) {
      if (!col.context_error.empty()) {
        results.push_back(nullptr);
        continue;
      }
      const CheckResult& r = col.results[row];
      results.push_back({{"status", status(r)},
                         {"error", std::isfinite(r.error) ? nlohmann::json(r.error) : nlohmann::json(nullptr)},
                         {"tolerance", r.tolerance},
                         {"detail", r.detail}});
    }
    j["checks"].push_back({{"op", c.op}, {"case", c.name}, {"results", results}});
    ++row;
  }
  return j;
}

}  // namespace

frontend::OptionTable selftest_options() {
  return {
      {"--device", "N|all", "the device to check (see vkspec devices), or every device (default: the preferred one)"},
      {"--op", "NAME", "check only this op"},
      {"--json", "FILE",
       "also write the op x device matrix (each device's capabilities, each check's "
       "status, error and tolerance) as JSON"}};
}

int cmd_selftest(const Args& args) {
  frontend::ArgParser ap("selftest", selftest_options());
  ap.parse(args);
  const std::string json_path = ap.get_or("--json", "");
  if (!json_path.empty()) check_output_path(json_path, "--json");
  auto instance = std::make_shared<Instance>();
  if (instance->devices().empty()) throw Error("no Vulkan device found");
  const std::string only = ap.get_or("--op", "");
  std::vector<DeviceColumn> cols;
  for (uint32_t d : selected_devices(ap, *instance)) cols.push_back(run_checks(instance, d, only));

  // Only devices that could not be opened: their one line each says it all.
  if (std::any_of(cols.begin(), cols.end(), [](const DeviceColumn& c) { return c.context_error.empty(); }))
    print_matrix(*instance, cols, only);
  size_t passed = 0, skipped = 0, failed = 0;
  for (const DeviceColumn& col : cols) {
    if (!col.context_error.empty()) std::printf("device %u: %s\n", col.index, col.context_error.c_str());
    for (const CheckResult& r : col.results) (r.skipped ? skipped : r.pass() ? passed : failed) += 1;
  }
  const size_t unusable =
      std::count_if(cols.begin(), cols.end(), [](const DeviceColumn& c) { return !c.context_error.empty(); });
  std::printf("%zu passed, %zu skipped, %zu failed", passed, skipped, failed);
  if (unusable) std::printf(", %zu device(s) unusable", unusable);
  std::printf("\n");
  if (!json_path.empty()) write_json_file(json_path, matrix_json(*instance, cols, only), "selftest");
  return failed || unusable ? 1 : 0;
}

}  // namespace vkspec::cli
