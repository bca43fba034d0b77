#include "eval/paired_difference.h"

#include <cmath>
#include <limits>
#include <vector>

namespace vkspec {

double t_quantile_975(int64_t df) {
  static const double table[30] = {12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
                                   2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
                                   2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (df < 1) return std::numeric_limits<double>::quiet_NaN();
  if (df <= 30) return table[df - 1];
  const double z = 1.959963984540054, v = static_cast<double>(df);
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

PairedDifference paired_difference(const std::map<uint64_t, double>& a, const std::map<uint64_t, double>& b) {
  PairedDifference p;
  std::vector<double> d;
  for (const auto& [seed, va] : a) {
    auto it = b.find(seed);
    if (it == b.end()) continue;
    p.mean_a += va;
    p.mean_b += it->second;
    d.push_back(it->second - va);
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  p.pairs = static_cast<int64_t>(d.size());
  p.se = nan;
  p.ci = {nan, nan};
  if (d.empty()) return p;
  const double n = static_cast<double>(d.size());
  p.mean_a /= n;
  p.mean_b /= n;
  for (double v : d) p.diff += v;
  p.diff /= n;
  if (d.size() < 2) return p;
  double ss = 0;
  for (double v : d) ss += (v - p.diff) * (v - p.diff);
  p.se = std::sqrt(ss / (n - 1) / n);
  const double t = t_quantile_975(p.pairs - 1);
  p.ci = {p.diff - t * p.se, p.diff + t * p.se};
  return p;
}

}  // namespace vkspec
