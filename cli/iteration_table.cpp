#include "cli/iteration_table.h"

#include <cstdio>

namespace vkspec::cli {
namespace {

constexpr int kBuckets = IterationStats::kVisits;

std::string rate_cell(double v) {
  if (v < 0) return "-";
  char b[16];
  std::snprintf(b, sizeof(b), "%.3f", v);
  return b;
}

nlohmann::json rate_json(double v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string visit_label(int k) { return k + 1 < kBuckets ? std::to_string(k + 1) : std::to_string(kBuckets) + "+"; }

}  // namespace

void print_iteration_table(const std::vector<IterationRow>& rows) {
  if (rows.empty()) return;
  std::printf("\nper visit k of a position (its k-th verification): collision = the next draft equals this one, "
              "acceptance = share accepted among the rows the step decided, drafts = draft rows per image\n");
  std::printf("%-10s %-24s %-10s", "method", "options", "");
  for (int k = 0; k < kBuckets; ++k) std::printf(" %7s", ("k=" + visit_label(k)).c_str());
  std::printf(" %7s\n", "all");
  for (const IterationRow& r : rows) {
    const IterationStats& s = *r.stats;
    const double images = static_cast<double>(s.images > 0 ? s.images : 1);
    int64_t drafts = 0;
    for (int64_t d : s.drafts) drafts += d;
    std::printf("%-10s %-24s %-10s", r.method.c_str(), r.options.c_str(), "collision");
    for (int k = 0; k < kBuckets; ++k) std::printf(" %7s", rate_cell(s.collision_rate(k)).c_str());
    std::printf(" %7s\n", rate_cell(s.collision_rate()).c_str());
    std::printf("%-10s %-24s %-10s", "", "", "acceptance");
    for (int k = 0; k < kBuckets; ++k) std::printf(" %7s", rate_cell(s.acceptance_rate(k)).c_str());
    std::printf(" %7s\n", rate_cell(s.acceptance_rate()).c_str());
    std::printf("%-10s %-24s %-10s", "", "", "drafts");
    for (int k = 0; k < kBuckets; ++k)
      std::printf(" %7.1f", static_cast<double>(s.drafts[static_cast<size_t>(k)]) / images);
    std::printf(" %7.1f\n", static_cast<double>(drafts) / images);
  }
}

nlohmann::json iteration_json(const IterationStats& s) {
  nlohmann::json j;
  const double images = static_cast<double>(s.images > 0 ? s.images : 1);
  j["images"] = s.images;
  for (int k = 0; k < kBuckets; ++k) {
    const size_t i = static_cast<size_t>(k);
    j["visits"].push_back(visit_label(k));
    j["drafts_per_image"].push_back(static_cast<double>(s.drafts[i]) / images);
    j["collision"].push_back(rate_json(s.collision_rate(k)));
    j["acceptance"].push_back(rate_json(s.acceptance_rate(k)));
    j["transitions"].push_back(s.transitions[i]);
    j["decided"].push_back(s.decided[i]);
  }
  j["collision_all"] = rate_json(s.collision_rate());
  j["acceptance_all"] = rate_json(s.acceptance_rate());
  return j;
}

}  // namespace vkspec::cli
