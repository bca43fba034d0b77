#include "cli/quality_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "eval/fid_infinity.h"

namespace vkspec::cli {
namespace {

std::string fmt(const char* f, double a) {
  char b[64];
  std::snprintf(b, sizeof(b), f, a);
  return b;
}

std::string opt(const std::optional<double>& v, const char* f) { return v ? fmt(f, *v) : "-"; }

// "-12.3 [-15.0, -9.6]" (scaled), " n.s." when the interval contains 0.
std::string difference(const std::optional<PairedDifference>& d, double scale, const char* f) {
  if (!d) return "-";
  std::string s = fmt(f, d->diff * scale);
  if (d->pairs >= 2) s += " [" + fmt(f, d->ci.low * scale) + ", " + fmt(f, d->ci.high * scale) + "]";
  if (!d->significant()) s += " n.s.";
  return s;
}

nlohmann::json number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json finite(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json difference_json(const std::optional<PairedDifference>& d) {
  if (!d) return nullptr;
  return {{"pairs", d->pairs},
          {"ar_mean", d->mean_a},
          {"mean", d->mean_b},
          {"diff", d->diff},
          {"se", finite(d->se)},
          {"ci", d->pairs >= 2 ? nlohmann::json::array({d->ci.low, d->ci.high}) : nlohmann::json(nullptr)},
          {"significant", d->significant()}};
}

}  // namespace

void print_quality_table(const std::vector<QualityRow>& rows, bool precision_recall) {
  std::vector<std::vector<std::string>> table;
  table.push_back({"method", "options", "images", "class acc [95 % CI]", "KID (SE)", "FID-inf", "NFE - ar [95 % CI]",
                   "ms/image - ar [95 % CI]", "class acc - ar [95 % CI]"});
  if (precision_recall) {
    table[0].push_back("precision");
    table[0].push_back("recall");
  }
  bool any_ns = false;
  for (const QualityRow& r : rows) {
    const RunQuality& q = *r.quality;
    std::string acc = "-";
    if (r.class_accuracy >= 0) {
      acc = fmt("%.1f%%", 100 * r.class_accuracy);
      if (q.class_accuracy_ci)
        acc += " [" + fmt("%.1f", 100 * q.class_accuracy_ci->low) + ", " +
               fmt("%.1f", 100 * q.class_accuracy_ci->high) + "]";
    }
    // KID's scale is the feature space's (here about 30 for a typical kernel value), not Inception's.
    std::string kid = q.kid ? fmt("%.3g", *q.kid) + (q.kid_se ? " (" + fmt("%.2g", *q.kid_se) + ")" : "") : "-";
    std::vector<std::string> row = {r.method,
                                    r.options,
                                    std::to_string(r.images),
                                    acc,
                                    kid,
                                    opt(q.fid_inf, "%.2f"),
                                    difference(q.nfe_vs_ar, 1, "%+.1f"),
                                    difference(q.time_vs_ar, 1, "%+.0f"),
                                    difference(q.accuracy_vs_ar, 100, "%+.1f")};
    if (precision_recall) {
      row.push_back(opt(q.precision, "%.3f"));
      row.push_back(opt(q.recall, "%.3f"));
    }
    for (const auto* d : {&q.nfe_vs_ar, &q.time_vs_ar, &q.accuracy_vs_ar})
      any_ns = any_ns || (*d && !(*d)->significant());
    table.push_back(std::move(row));
  }
  std::vector<size_t> width(table[0].size(), 0);
  for (const auto& row : table)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::printf("\nquality with 95 %% intervals; differences against ar paired on equal seeds (method - ar):\n");
  for (const auto& row : table) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string cell = row[c];
      if (c + 1 < row.size()) cell.resize(width[c], ' ');
      line += (c ? "  " : "") + cell;
    }
    std::printf("%s\n", line.c_str());
  }
  int64_t dim = 0;
  for (const QualityRow& r : rows) dim = std::max(dim, r.feature_dim);
  std::printf("class acc: percentile bootstrap over images; KID: unbiased at any image count, SE by jackknife; "
              "FID-inf: FID extrapolated to infinitely many images (from %lld images)\n",
              static_cast<long long>(fid_infinity_min_images(dim)));
  if (any_ns) std::printf("n.s.: not significant, the 95 %% interval of the paired difference contains 0\n");
}

nlohmann::json quality_json(const RunQuality& q) {
  nlohmann::json vs_ar = nullptr;
  if (q.nfe_vs_ar || q.time_vs_ar || q.accuracy_vs_ar)
    vs_ar = {{"nfe", difference_json(q.nfe_vs_ar)},
             {"time_ms", difference_json(q.time_vs_ar)},
             {"class_accuracy", difference_json(q.accuracy_vs_ar)}};
  return {{"kid", number(q.kid)},
          {"kid_se", number(q.kid_se)},
          {"fid_inf", number(q.fid_inf)},
          {"class_accuracy_ci", q.class_accuracy_ci
                                    ? nlohmann::json::array({q.class_accuracy_ci->low, q.class_accuracy_ci->high})
                                    : nlohmann::json(nullptr)},
          {"vs_ar", vs_ar},
          {"precision", number(q.precision)},
          {"recall", number(q.recall)}};
}

}  // namespace vkspec::cli
