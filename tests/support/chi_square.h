#pragma once
// Pearson's chi-square goodness-of-fit for the statistical sampling tests. Fixed seeds make every
// outcome deterministic; the significance level says how unlucky a correct sampler would have to
// be for a seed to fail.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace vkspec::testing {

struct ChiSquare {
  double statistic = 0;
  int dof = 0;
  double critical = 0;            // upper quantile at the requested significance
  uint64_t impossible_draws = 0;  // draws of outcomes with probability 0
  bool fits() const { return impossible_draws == 0 && statistic <= critical; }
  std::string str() const {
    return "chi2 = " + std::to_string(statistic) + " (dof " + std::to_string(dof) + ", critical " +
           std::to_string(critical) + "), " + std::to_string(impossible_draws) + " impossible draws";
  }
};

// Upper quantile of chi-square with k degrees of freedom for the standard normal quantile z
// (Wilson-Hilferty; within about 1% for k >= 3).
inline double chi_square_quantile(int k, double z) {
  const double a = 2.0 / (9.0 * k);
  const double c = 1.0 - a + z * std::sqrt(a);
  return k * c * c * c;
}

// P(X >= x) for X chi-square with k degrees of freedom: the regularized upper incomplete gamma
// Q(k/2, x/2), by its series below a + 1 and its continued fraction (modified Lentz) above.
inline double chi_square_p_value(double x, int k) {
  if (k <= 0) return 1.0;
  if (x <= 0) return 1.0;
  const double a = 0.5 * k, y = 0.5 * x;
  const double log_prefix = a * std::log(y) - y - std::lgamma(a);
  if (y < a + 1) {
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < 1000 && term > sum * 1e-16; ++n) sum += term *= y / (a + n);
    return std::max(0.0, 1.0 - sum * std::exp(log_prefix));
  }
  const double tiny = 1e-300;
  double b = y + 1 - a, c = 1 / tiny, d = 1 / b, f = d;
  for (int n = 1; n < 1000; ++n) {
    const double an = -n * (n - a);
    b += 2;
    d = an * d + b;
    d = std::fabs(d) < tiny ? tiny : d;
    c = b + an / c;
    c = std::fabs(c) < tiny ? tiny : c;
    d = 1 / d;
    const double delta = d * c;
    f *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return std::exp(log_prefix) * f;
}

// counts[i] draws of outcome i against probabilities probs[i] (summing to 1). Outcomes with
// expected count below 5 are pooled (in index order) so the statistic stays chi-square.
// z = 3.09 is a significance of 0.001.
inline ChiSquare chi_square(const std::vector<uint64_t>& counts, const std::vector<double>& probs, double z = 3.09) {
  ChiSquare r;
  uint64_t n = 0;
  for (uint64_t c : counts) n += c;
  double pooled_e = 0, pooled_o = 0;
  int bins = 0;
  auto add = [&](double o, double e) {
    r.statistic += (o - e) * (o - e) / e;
    ++bins;
  };
  for (size_t i = 0; i < counts.size(); ++i) {
    const double e = probs[i] * static_cast<double>(n);
    if (probs[i] <= 0) {
      r.impossible_draws += counts[i];
      continue;
    }
    if (e < 5) {
      pooled_e += e;
      pooled_o += static_cast<double>(counts[i]);
      if (pooled_e >= 5) {
        add(pooled_o, pooled_e);
        pooled_e = pooled_o = 0;
      }
    } else {
      add(static_cast<double>(counts[i]), e);
    }
  }
  if (pooled_e > 0) add(pooled_o, pooled_e);
  r.dof = bins - 1;
  r.critical = r.dof > 0 ? chi_square_quantile(r.dof, z) : std::numeric_limits<double>::infinity();
  return r;
}

// Two-sample (homogeneity) chi-square: are counts a and b (same outcomes, same order) draws of
// one distribution? Outcomes are pooled in index order until both expected counts reach 5; a
// remainder too small for a bin of its own joins the last bin.
inline ChiSquare two_sample_chi_square(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b,
                                       double z = 3.09) {
  double na = 0, nb = 0;
  for (size_t i = 0; i < a.size(); ++i) na += static_cast<double>(a[i]), nb += static_cast<double>(b[i]);
  const double fa = na / (na + nb), fb = nb / (na + nb);
  std::vector<std::pair<double, double>> bins;
  double oa = 0, ob = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    oa += static_cast<double>(a[i]);
    ob += static_cast<double>(b[i]);
    if (std::min(fa, fb) * (oa + ob) >= 5) bins.push_back({oa, ob}), oa = ob = 0;
  }
  if (oa + ob > 0) {
    if (bins.empty()) bins.push_back({0, 0});
    bins.back().first += oa;
    bins.back().second += ob;
  }
  ChiSquare r;
  for (const auto& [x, y] : bins) {
    const double ea = fa * (x + y), eb = fb * (x + y);
    r.statistic += (x - ea) * (x - ea) / ea + (y - eb) * (y - eb) / eb;
  }
  r.dof = static_cast<int>(bins.size()) - 1;
  r.critical = r.dof > 0 ? chi_square_quantile(r.dof, z) : std::numeric_limits<double>::infinity();
  return r;
}

// Total variation distance between two distributions.
inline double total_variation(const std::vector<double>& p, const std::vector<double>& q) {
  double s = 0;
  for (size_t i = 0; i < p.size(); ++i) s += std::fabs(p[i] - q[i]);
  return s / 2;
}

}  // namespace vkspec::testing
