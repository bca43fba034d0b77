#include "cli/kernel_table.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace vkspec::cli {
namespace {

using Row = std::pair<KernelTimes::key_type, KernelTime>;

std::vector<Row> by_ms(const KernelTimes& t) {
  std::vector<Row> rows(t.begin(), t.end());
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.second.ms > b.second.ms; });
  return rows;
}

}  // namespace

void KernelProfile::add(const Generation& g) {
  for (const auto& [key, t] : g.device_ms_by_kernel) total[key] += t;
  ++images;
  nfe += g.nfe;
}

void print_kernel_table(const std::string& run_label, const KernelProfile& p, size_t top) {
  if (!p.images) return;
  const double n = static_cast<double>(p.images), f = static_cast<double>(std::max<int64_t>(p.nfe, 1));
  double all = 0;
  for (const auto& [key, t] : p.total) all += t.ms;
  std::printf("\nGPU time by kernel, %s: %.1f ms per image (%lld images, %.1f target forwards each; "
              "fwd: per target forward)\n",
              run_label.c_str(), all / n, static_cast<long long>(p.images), static_cast<double>(p.nfe) / n);
  std::printf("  %-9s %-26s %10s %9s %6s %10s %9s\n", "stage", "kernel", "calls/img", "ms/img", "share", "calls/fwd",
              "ms/fwd");
  auto line = [&](const std::string& stage, const std::string& kernel, const KernelTime& t) {
    std::printf("  %-9s %-26s %10.1f %9.2f %5.1f%% %10.2f %9.3f\n", stage.c_str(), kernel.c_str(),
                static_cast<double>(t.calls) / n, t.ms / n, all > 0 ? 100.0 * t.ms / all : 0.0,
                static_cast<double>(t.calls) / f, t.ms / f);
  };
  const std::vector<Row> rows = by_ms(p.total);
  KernelTime rest;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i < top)
      line(rows[i].first.first, rows[i].first.second, rows[i].second);
    else
      rest += rows[i].second;
  }
  if (rows.size() > top) line("other", "(" + std::to_string(rows.size() - top) + " more)", rest);
}

nlohmann::json kernel_json(const KernelProfile& p) {
  if (!p.images) return nullptr;
  const double n = static_cast<double>(p.images);
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [key, t] : by_ms(p.total))
    j.push_back(
        {{"stage", key.first}, {"kernel", key.second}, {"calls", static_cast<double>(t.calls) / n}, {"ms", t.ms / n}});
  return j;
}

}  // namespace vkspec::cli
