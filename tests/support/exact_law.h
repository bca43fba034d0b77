#pragma once
// The exact law of a tiny model's images (tools/exact_law.py: every one of the V^N grids' probability
// under the sampler's CFG, temperature and top-k, from the PyTorch reference forward in float64)
// and the goodness-of-fit tests of a sample against it: the whole-image distribution (cells with
// an expected count under 5 pooled in index order), every position's marginal, every horizontally
// and vertically adjacent pair, each a Pearson chi-square, Bonferroni over all of them. A grid the
// law gives probability 0 (a token top-k removes) fails outright. The law is computed once per
// build and kept in the test cache (VKSPEC_CACHE_DIR), keyed by the model file and the settings.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "decoding/sampler_settings.h"
#include "engine/vk/cache_file.h"
#include "tests/support/cached_sample.h"
#include "tests/support/chi_square.h"
#include "tests/support/python_reference.h"

namespace vkspec::testing {

struct ExactLaw {
  int64_t vocab = 0, grid = 0;
  std::vector<double> p;      // [V^N], grid (t_0 .. t_{N-1}) at sum t_n V^(N-1-n)
  std::string reference_log;  // exact_law.py's summary line (entropies, context dependence)
  int64_t tokens() const { return grid * grid; }
  uint64_t index(const std::vector<int32_t>& g) const {
    uint64_t i = 0;
    for (int32_t t : g) i = i * static_cast<uint64_t>(vocab) + static_cast<uint64_t>(t);
    return i;
  }
};

// The law of a tiny model under `sampler` (top-p off). source: exact_law.py's model arguments,
// {"--model", FILE, "--label", "0"} (LlamaGen c2i) or {"--janus", FOLDER, "--ids", "1,2,3"};
// The cache key covers key_file's bytes (the model), the sampler and `condition` (what the model is
// conditioned on, in words: not the model's path, which may differ between processes). run.ok
// false with the reason in run.message (run.skipped: PyTorch missing).
struct ExactLawRun {
  ReferenceRun run;
  ExactLaw law;
};

inline ExactLawRun exact_law(const std::string& cache_dir, const std::vector<std::string>& source,
                             const std::string& key_file, const std::string& condition, int64_t vocab, int64_t grid,
                             const SamplerSettings& sampler) {
  ExactLawRun r;
  r.law.vocab = vocab;
  r.law.grid = grid;
  const std::string what = sampler.str() + " " + condition;
  const uint64_t key = cached_sample_detail::hash_file(key_file, cache_hash(what.data(), what.size()));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(key));
  const std::string dir = cache_dir.empty() ? scratch_dir("exact_law") : cache_dir;
  const std::string path = dir + "/exact-law-" + hex + ".f64";
  ScopedFileLock lock(path + ".lock");
  std::vector<char> bytes = read_cache_file(path);
  const size_t images = static_cast<size_t>(std::pow(static_cast<double>(vocab), static_cast<double>(grid * grid)));
  if (bytes.size() != images * sizeof(double)) {
    const std::string tmp = path + ".tmp";
    std::vector<std::string> args = {"law"};
    args.insert(args.end(), source.begin(), source.end());
    for (const std::string& a :
         {std::string("--cfg"), std::to_string(sampler.cfg), std::string("--temperature"),
          std::to_string(sampler.temperature), std::string("--top-k"), std::to_string(sampler.top_k),
          std::string("--out"), tmp, std::string("--min-gap"), std::string("1e-4")})
      args.push_back(a);
    r.run = run_tool("exact_law.py", args);
    if (!r.run.ok) return r;
    bytes = read_cache_file(tmp);
    std::remove(tmp.c_str());
    write_cache_file(path, bytes.data(), bytes.size());
    r.law.reference_log = r.run.message;
  }
  r.run.ok = bytes.size() == images * sizeof(double);
  if (!r.run.ok) {
    r.run.message = path + ": " + std::to_string(bytes.size()) + " bytes, expected " +
                    std::to_string(images * sizeof(double)) + " (" + r.run.message + ")";
    return r;
  }
  r.law.p.resize(images);
  std::memcpy(r.law.p.data(), bytes.data(), bytes.size());
  return r;
}

struct LawTest {
  std::string what;
  ChiSquare chi;
  double p_value = 1;
  double tv = 0, tv_exact_sampler = 0;  // of this marginal: the sample's, an exact sampler's expected
};

struct LawVerdict {
  bool fits = true;
  double alpha = 0, tv = 0, tv_exact_sampler = 0;  // tv_exact_sampler: E[TV] of an exact sampler's sample
  std::vector<LawTest> tests;
  std::string report() const;
  const LawTest& worst() const;
};

namespace exact_law_detail {

// E|X - lambda| for X ~ Poisson(lambda): 2 e^-lambda lambda^(m+1) / m!, m = floor(lambda).
inline double poisson_mean_abs_deviation(double lambda) {
  if (lambda <= 0) return 0;
  const double m = std::floor(lambda);
  return 2 * std::exp(-lambda + (m + 1) * std::log(lambda) - std::lgamma(m + 1));
}

// The sample's total variation from the law and what an exact sampler's sample of the same size
// would show on average (sampling noise alone; Poisson per cell).
inline void add_total_variation(const std::vector<uint64_t>& counts, const std::vector<double>& probs, LawTest& t) {
  double n = 0;
  for (uint64_t c : counts) n += static_cast<double>(c);
  for (size_t i = 0; i < probs.size(); ++i) {
    t.tv += std::fabs(static_cast<double>(counts[i]) / n - probs[i]) / 2;
    t.tv_exact_sampler += poisson_mean_abs_deviation(n * probs[i]) / n / 2;
  }
}

// Marginal laws of the cells listed (one position, or an adjacent pair) and the sample's counts.
inline LawTest cell_test(const ExactLaw& law, const std::vector<std::vector<int32_t>>& grids,
                         const std::vector<int64_t>& cells, const std::string& what) {
  const uint64_t V = static_cast<uint64_t>(law.vocab);
  const size_t n_out = cells.size() == 1 ? V : V * V;
  std::vector<double> probs(n_out);
  std::vector<int32_t> g(static_cast<size_t>(law.tokens()));
  for (uint64_t i = 0; i < law.p.size(); ++i) {
    if (law.p[i] == 0) continue;
    uint64_t rest = i;
    for (int64_t n = law.tokens() - 1; n >= 0; --n)
      g[static_cast<size_t>(n)] = static_cast<int32_t>(rest % V), rest /= V;
    size_t k = 0;
    for (int64_t c : cells) k = k * V + static_cast<size_t>(g[static_cast<size_t>(c)]);
    probs[k] += law.p[i];
  }
  std::vector<uint64_t> counts(n_out);
  for (const auto& s : grids) {
    size_t k = 0;
    for (int64_t c : cells) k = k * V + static_cast<size_t>(s[static_cast<size_t>(c)]);
    ++counts[k];
  }
  LawTest t{what, chi_square(counts, probs)};
  t.p_value = t.chi.impossible_draws ? 0.0 : chi_square_p_value(t.chi.statistic, t.chi.dof);
  add_total_variation(counts, probs, t);
  return t;
}

}  // namespace exact_law_detail

// Every test of `grids` against `law` at family-wise significance alpha (Bonferroni).
inline LawVerdict test_against_law(const ExactLaw& law, const std::vector<std::vector<int32_t>>& grids,
                                   double alpha = 1e-3) {
  namespace d = exact_law_detail;
  LawVerdict v;
  v.alpha = alpha;
  std::vector<uint64_t> counts(law.p.size());
  for (const auto& g : grids) ++counts[law.index(g)];
  LawTest whole{"whole image", chi_square(counts, law.p)};
  whole.p_value = whole.chi.impossible_draws ? 0.0 : chi_square_p_value(whole.chi.statistic, whole.chi.dof);
  d::add_total_variation(counts, law.p, whole);
  v.tv = whole.tv;
  v.tv_exact_sampler = whole.tv_exact_sampler;
  v.tests.push_back(whole);
  const int64_t W = law.grid;
  for (int64_t c = 0; c < law.tokens(); ++c)
    v.tests.push_back(d::cell_test(law, grids, {c}, "position " + std::to_string(c)));
  for (int64_t c = 0; c < law.tokens(); ++c) {
    if (c % W + 1 < W)
      v.tests.push_back(d::cell_test(law, grids, {c, c + 1},
                                     "pair " + std::to_string(c) + "," + std::to_string(c + 1)));
    if (c + W < law.tokens())
      v.tests.push_back(d::cell_test(law, grids, {c, c + W},
                                     "pair " + std::to_string(c) + "," + std::to_string(c + W)));
  }
  for (const LawTest& t : v.tests) v.fits = v.fits && t.p_value >= alpha / static_cast<double>(v.tests.size());
  return v;
}

inline const LawTest& LawVerdict::worst() const {
  size_t w = 0;
  for (size_t i = 1; i < tests.size(); ++i)
    if (tests[i].p_value < tests[w].p_value) w = i;
  return tests[w];
}

inline std::string LawVerdict::report() const {
  char line[256];
  std::snprintf(line, sizeof line,
                "  TV from the exact law %.4f (an exact sampler's expected %.4f); %zu tests, "
                "each at %.2e (family %.0e); smallest p %.3g (%s)\n",
                tv, tv_exact_sampler, tests.size(), alpha / static_cast<double>(tests.size()), alpha, worst().p_value,
                worst().what.c_str());
  std::string r = line;
  for (const LawTest& t : tests) {
    std::snprintf(line, sizeof line, "  %-12s chi2 %9.2f dof %4d p %-9.3g TV %.4f (noise %.4f)%s\n", t.what.c_str(),
                  t.chi.statistic, t.chi.dof, t.p_value, t.tv, t.tv_exact_sampler,
                  t.chi.impossible_draws ? (" " + std::to_string(t.chi.impossible_draws) + " impossible").c_str() : "");
    r += line;
  }
  return r;
}

}  // namespace vkspec::testing
