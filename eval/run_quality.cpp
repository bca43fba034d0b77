#include "eval/run_quality.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "eval/feature_dots.h"
#include "eval/fid_infinity.h"
#include "eval/precision_recall.h"
#include "eval/seeded_rng.h"

namespace vkspec {
namespace {

int64_t judged_count(const SampleSummary& s) {
  return s.feature_dim ? static_cast<int64_t>(s.features.size()) / s.feature_dim : 0;
}

std::map<uint64_t, double> by_seed(const SampleSummary& s, const std::vector<double>& values) {
  std::map<uint64_t, double> m;
  for (size_t i = 0; i < s.image_seeds.size(); ++i) m[s.image_seeds[i]] = values[i];
  return m;
}

std::map<uint64_t, double> correct_by_seed(const SampleSummary& s) {
  std::map<uint64_t, double> m;
  for (size_t i = 0; i < s.image_seeds.size(); ++i)
    if (s.image_correct[i] >= 0) m[s.image_seeds[i]] = s.image_correct[i];
  return m;
}

std::optional<PairedDifference> paired(const std::map<uint64_t, double>& ar, const std::map<uint64_t, double>& run) {
  PairedDifference d = paired_difference(ar, run);
  if (d.pairs == 0) return std::nullopt;
  return d;
}

}  // namespace

QualityReference quality_reference(const ReferenceSet& reference) {
  QualityReference q;
  if (reference.stats.dim == 0) return q;
  q.frechet = frechet_reference(reference.stats);
  if (reference.feature_count >= 2)
    q.kid = kid_reference(reference.features, reference.feature_count, reference.stats.dim);
  return q;
}

RunQuality assess_quality(const SampleSummary& run, const SampleSummary* ar, const QualityReference& ref,
                          const QualityOptions& options) {
  RunQuality q;
  const int64_t judged = judged_count(run), dim = run.feature_dim;
  std::vector<double> correct;
  for (int c : run.image_correct)
    if (c >= 0) correct.push_back(c);
  if (!correct.empty()) q.class_accuracy_ci = bootstrap_mean_interval(correct);
  if (judged >= 2) {  // FID needs two images at least; docs quote it from 1000 or more
    const GaussianStats st = gaussian_stats(run.features, judged, dim);
    if (!ref.empty() && ref.frechet.stats.dim == dim) {
      q.fid = frechet_distance(ref.frechet, st);
      q.fid_inf = fid_infinity(run.features, judged, dim, ref.frechet);
    }
    if (ref.kid.dim == dim && ref.kid.count >= 2) {
      const KidEstimate k = kernel_inception_distance(run.features, judged, ref.kid);
      q.kid = k.kid;
      if (std::isfinite(k.se)) q.kid_se = k.se;
    }
    // Against as many reference vectors as images (a fixed subset), as the paper compares.
    constexpr int kNeighbours = 3;
    if (options.precision_recall && ref.kid.dim == dim && judged > kNeighbours && ref.kid.count > kNeighbours) {
      const int64_t n = std::min(judged, ref.kid.count);
      SeededRng rng(0x707263ull);  // "prc"
      const std::vector<float> real = feature_rows(ref.kid.features, dim, rng.subset(ref.kid.count, n));
      const PrecisionRecall pr = precision_recall(real, n, run.features, judged, dim, kNeighbours);
      q.precision = pr.precision;
      q.recall = pr.recall;
    }
    const int64_t ar_judged = ar ? judged_count(*ar) : 0;
    if (ar_judged >= 2 && ar->feature_dim == dim)
      q.fid_vs_ar = frechet_distance(gaussian_stats(ar->features, ar_judged, dim), st);
  }
  if (ar && ar != &run) {
    q.nfe_vs_ar = paired(by_seed(*ar, ar->image_nfe), by_seed(run, run.image_nfe));
    q.time_vs_ar = paired(by_seed(*ar, ar->image_wall_ms), by_seed(run, run.image_wall_ms));
    q.accuracy_vs_ar = paired(correct_by_seed(*ar), correct_by_seed(run));
  }
  return q;
}

}  // namespace vkspec
