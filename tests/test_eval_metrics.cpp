// Quality metrics with intervals (eval/): KID against brute force, its unbiasedness against the
// exact population value and its jackknife standard error against the spread over repeated
// draws; FID-infinity's fit and extrapolation; the bootstrap interval; paired differences by
// hand; precision and recall on identical, disjoint and half-shared sets; and a run's quality
// numbers depending only on which images it holds (live, resumed or merged).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "common/error.h"
#include "eval/bootstrap.h"
#include "eval/fid_infinity.h"
#include "eval/frechet.h"
#include "eval/kid.h"
#include "eval/paired_difference.h"
#include "eval/precision_recall.h"
#include "eval/run_quality.h"
#include "eval/sample_summary.h"

namespace vkspec {
namespace {

std::vector<float> gaussian(std::mt19937& rng, int64_t n, int64_t dim, float shift = 0, float sd = 1) {
  std::normal_distribution<float> g(0.0f, sd);
  std::vector<float> f(static_cast<size_t>(n * dim));
  for (float& v : f) v = g(rng) + shift;
  return f;
}

// The unbiased estimator written out term by term, in double.
double brute_kid(const std::vector<float>& x, int64_t n, const std::vector<float>& y, int64_t m, int64_t dim) {
  double xx = 0, yy = 0, xy = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (i != j) xx += kid_kernel(&x[i * dim], &x[j * dim], dim);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < m; ++j)
      if (i != j) yy += kid_kernel(&y[i * dim], &y[j * dim], dim);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) xy += kid_kernel(&x[i * dim], &y[j * dim], dim);
  return xx / (n * (n - 1.0)) + yy / (m * (m - 1.0)) - 2 * xy / (n * static_cast<double>(m));
}

KidEstimate kid_of(const std::vector<float>& x, int64_t n, const std::vector<float>& y, int64_t m, int64_t dim) {
  return kernel_inception_distance(x, n, kid_reference(y, m, dim));
}

TEST(kid, MatchesTheEstimatorWrittenOut) {
  std::mt19937 rng(1);
  const int64_t dim = 12;
  const std::vector<float> x = gaussian(rng, 37, dim, 0.3f), y = gaussian(rng, 53, dim);
  const KidEstimate k = kid_of(x, 37, y, 53, dim);
  const double b = brute_kid(x, 37, y, 53, dim);
  EXPECT_NEAR(k.kid, b, 1e-5 * (1 + std::abs(b)));
  EXPECT_GT(k.se, 0);
  EXPECT_THROW(kid_of(x, 36, y, 53, dim), Error);  // the wrong number of values
  const std::vector<float> one(x.begin(), x.begin() + dim), two(x.begin(), x.begin() + 2 * dim);
  EXPECT_THROW(kid_of(one, 1, y, 53, dim), Error);
  EXPECT_TRUE(std::isnan(kid_of(two, 2, y, 53, dim).se));  // the jackknife needs 3 on each side
}

TEST(kid, ASetAgainstItselfIsNearZeroAndAShiftedOneIsNot) {
  std::mt19937 rng(2);
  const int64_t dim = 16, n = 400;
  const std::vector<float> x = gaussian(rng, n, dim), x2 = gaussian(rng, n, dim), y = gaussian(rng, n, dim, 0.5f);
  const KidEstimate self = kid_of(x, n, x, n, dim);
  const KidEstimate same = kid_of(x, n, x2, n, dim);
  const KidEstimate shifted = kid_of(x, n, y, n, dim);
  // Against itself exactly 2 / n (mean off-diagonal kernel - mean diagonal kernel): O(1 / n).
  double off = 0, diag = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) (i == j ? diag : off) += kid_kernel(&x[i * dim], &x[j * dim], dim);
  EXPECT_NEAR(self.kid, 2.0 / n * (off / (n * (n - 1.0)) - diag / n), 1e-5);
  EXPECT_LT(self.kid, 0);
  EXPECT_GT(self.kid, -0.05);
  EXPECT_LT(std::abs(same.kid), 3 * same.se);
  // Shifted by 0.5 in every coordinate: far above its noise and the same-distribution value
  // (the exact population value is checked in the next test).
  EXPECT_GT(shifted.kid, 10 * shifted.se);
  EXPECT_GT(shifted.kid, 100 * std::abs(same.kid));
}

// Two distributions on four points of the plane each: the population MMD^2 is a finite sum, and
// the unbiased estimator's mean over many draws of only 4 and 5 vectors must equal it.
TEST(kid, UnbiasedAtTinySamplesAgainstTheExactPopulationValue) {
  const float p[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
  float q[4][2];
  for (int i = 0; i < 4; ++i) {
    q[i][0] = p[i][0] * 1.5f + 0.5f;
    q[i][1] = p[i][1] + 0.25f;
  }
  double pp = 0, qq = 0, pq = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      pp += kid_kernel(p[i], p[j], 2) / 16;
      qq += kid_kernel(q[i], q[j], 2) / 16;
      pq += kid_kernel(p[i], q[j], 2) / 16;
    }
  const double population = pp + qq - 2 * pq;
  ASSERT_GT(population, 0.1);
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> pick(0, 3);
  const int reps = 4000;
  const int64_t n = 4, m = 5;
  double sum = 0, sum2 = 0, vsum = 0;
  for (int r = 0; r < reps; ++r) {
    std::vector<float> x, y;
    for (int64_t i = 0; i < n; ++i) {
      const int k = pick(rng);
      x.insert(x.end(), p[k], p[k] + 2);
    }
    for (int64_t i = 0; i < m; ++i) {
      const int k = pick(rng);
      y.insert(y.end(), q[k], q[k] + 2);
    }
    const double v = kid_of(x, n, y, m, 2).kid;
    sum += v;
    sum2 += v * v;
    // The biased form (V-statistic: the diagonal in, divided by n^2 and m^2), which the unbiased
    // one corrects.
    double xx = 0, yy = 0, xy = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) xx += kid_kernel(&x[i * 2], &x[j * 2], 2);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < m; ++j) yy += kid_kernel(&y[i * 2], &y[j * 2], 2);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) xy += kid_kernel(&x[i * 2], &y[j * 2], 2);
    vsum += xx / (n * n) + yy / (m * m) - 2 * xy / (n * m);
  }
  const double mean = sum / reps, sd = std::sqrt(sum2 / reps - mean * mean);
  EXPECT_NEAR(mean, population, 4 * sd / std::sqrt(reps)) << "population " << population;
  EXPECT_GT(std::abs(vsum / reps - population), 20 * sd / std::sqrt(reps));
}

// The jackknife standard error agrees with the spread of KID over independent draws.
TEST(kid, JackknifeStandardErrorMatchesTheSpreadOverDraws) {
  std::mt19937 rng(4);
  const int64_t dim = 8, n = 60, m = 90;
  const int reps = 300;
  double sum = 0, sum2 = 0, se = 0;
  for (int r = 0; r < reps; ++r) {
    const KidEstimate k = kid_of(gaussian(rng, n, dim, 0.3f), n, gaussian(rng, m, dim), m, dim);
    sum += k.kid;
    sum2 += k.kid * k.kid;
    se += k.se / reps;
  }
  const double mean = sum / reps, sd = std::sqrt(sum2 / reps - mean * mean);
  EXPECT_GT(se / sd, 0.75);
  EXPECT_LT(se / sd, 1.33);
}

TEST(fid_infinity, LineFitRecoversTheInterceptOfSyntheticFid) {
  std::vector<double> inv, fid;
  for (int n = 100; n <= 1000; n += 150) {
    inv.push_back(1.0 / n);
    fid.push_back(12.5 + 300.0 / n);  // FID(N) = a + b / N
  }
  const LineFit f = fit_line(inv, fid);
  EXPECT_NEAR(f.intercept, 12.5, 1e-9);
  EXPECT_NEAR(f.slope, 300.0, 1e-6);
  EXPECT_THROW(fit_line({0.1, 0.1}, {1, 2}), Error);
}

// Samples of N(s e_1, I) against the exact N(0, I): the population distance is s^2, FID from n
// images is above it by O(1 / n); FID-infinity removes most of that on average (a single value is
// about as noisy as FID).
TEST(fid_infinity, ExtrapolatesFiniteSampleBiasAway) {
  const int64_t dim = 8, n = 300;
  GaussianStats exact;
  exact.dim = dim;
  exact.count = 1000000;
  exact.mean.assign(dim, 0.0);
  exact.cov.assign(dim * dim, 0.0);
  for (int64_t i = 0; i < dim; ++i) exact.cov[i * dim + i] = 1.0;
  const FrechetReference ref = frechet_reference(exact);
  for (const double s : {0.5, 1.0}) {
    std::mt19937 rng(6);
    const int draws = 40;
    double fid_bias = 0, inf_bias = 0;
    for (int r = 0; r < draws; ++r) {
      std::vector<float> f = gaussian(rng, n, dim);
      for (int64_t i = 0; i < n; ++i) f[i * dim] += static_cast<float>(s);
      fid_bias += (frechet_distance(ref, gaussian_stats(f, n, dim)) - s * s) / draws;
      const std::optional<double> inf = fid_infinity(f, n, dim, ref);
      ASSERT_TRUE(inf);
      inf_bias += (*inf - s * s) / draws;
      EXPECT_EQ(*inf, *fid_infinity(f, n, dim, ref));  // fixed subsets
    }
    EXPECT_GT(fid_bias, 0.05) << "s " << s;
    EXPECT_LT(std::abs(inf_bias), 0.3 * fid_bias)
        << "s " << s << ", FID bias " << fid_bias << ", FID-inf bias " << inf_bias;
  }
  // Too few images: below 50, or below 5 per dimension.
  std::mt19937 rng(7);
  EXPECT_FALSE(fid_infinity(gaussian(rng, 49, dim), 49, dim, ref));
  EXPECT_EQ(fid_infinity_min_images(dim), 50);
  EXPECT_EQ(fid_infinity_min_images(256), 1280);
  GaussianStats wide = exact;
  wide.dim = 16;
  wide.mean.assign(16, 0.0);
  wide.cov.assign(256, 0.0);
  for (int64_t i = 0; i < 16; ++i) wide.cov[i * 16 + i] = 1.0;
  EXPECT_FALSE(fid_infinity(gaussian(rng, 79, 16), 79, 16, frechet_reference(wide)));
  EXPECT_TRUE(fid_infinity(gaussian(rng, 80, 16), 80, 16, frechet_reference(wide)));
}

TEST(bootstrap, IntervalCoversTheMeanShrinksWithNAndRepeats) {
  auto ones = [](int n, int k) {
    std::vector<double> v(n, 0.0);
    for (int i = 0; i < k; ++i) v[i * n / k] = 1.0;
    return v;
  };
  const Interval small = bootstrap_mean_interval(ones(50, 40));
  const Interval large = bootstrap_mean_interval(ones(800, 640));
  EXPECT_TRUE(small.contains(0.8));
  EXPECT_TRUE(large.contains(0.8));
  // Normal approximation: 2 * 1.96 * sqrt(0.16 / n) = 0.22 at 50, 0.055 at 800.
  EXPECT_NEAR(small.high - small.low, 0.22, 0.04);
  EXPECT_NEAR(large.high - large.low, 0.055, 0.01);
  const double ratio = (small.high - small.low) / (large.high - large.low);
  EXPECT_GT(ratio, 3.0);
  EXPECT_LT(ratio, 5.5);
  const Interval again = bootstrap_mean_interval(ones(50, 40));
  EXPECT_EQ(again.low, small.low);
  EXPECT_EQ(again.high, small.high);
  const Interval constant = bootstrap_mean_interval(std::vector<double>(20, 0.5));
  EXPECT_EQ(constant.low, 0.5);
  EXPECT_EQ(constant.high, 0.5);
  EXPECT_THROW(bootstrap_mean_interval({}), Error);
}

TEST(paired_difference, MatchesAHandComputationOnCommonSeedsOnly) {
  // Common seeds 1..4: differences -2, -1, 0, -4; mean -1.75, sample variance 8.75 / 3,
  // SE sqrt(8.75 / 3 / 4) = 0.853913, t(3) = 3.1824: [-4.4675, 0.9675], not significant.
  const std::map<uint64_t, double> a = {{1, 10}, {2, 12}, {3, 9}, {4, 11}, {7, 5}};
  const std::map<uint64_t, double> b = {{1, 8}, {2, 11}, {3, 9}, {4, 7}, {9, 1}};
  const PairedDifference d = paired_difference(a, b);
  EXPECT_EQ(d.pairs, 4);
  EXPECT_DOUBLE_EQ(d.mean_a, 10.5);
  EXPECT_DOUBLE_EQ(d.mean_b, 8.75);
  EXPECT_DOUBLE_EQ(d.diff, -1.75);
  const double se = std::sqrt(8.75 / 3 / 4);
  EXPECT_NEAR(d.se, se, 1e-12);
  EXPECT_NEAR(d.ci.low, -1.75 - 3.1824 * se, 1e-12);
  EXPECT_NEAR(d.ci.high, -1.75 + 3.1824 * se, 1e-12);
  EXPECT_FALSE(d.significant());
  // Always one more (and a little noise): significant.
  std::map<uint64_t, double> c, e;
  for (uint64_t s = 0; s < 10; ++s) {
    c[s] = static_cast<double>(s);
    e[s] = static_cast<double>(s) + 1 + 0.1 * static_cast<double>(s % 2);
  }
  const PairedDifference f = paired_difference(c, e);
  EXPECT_NEAR(f.diff, 1.05, 1e-12);
  EXPECT_TRUE(f.significant());
  EXPECT_EQ(paired_difference(a, {{100, 1}}).pairs, 0);
  EXPECT_FALSE(paired_difference(a, {{1, 3}}).significant());  // one pair: no interval
}

TEST(paired_difference, StudentQuantiles) {
  EXPECT_DOUBLE_EQ(t_quantile_975(1), 12.7062);
  EXPECT_DOUBLE_EQ(t_quantile_975(30), 2.0423);
  EXPECT_NEAR(t_quantile_975(31), 2.0395, 1e-4);
  EXPECT_NEAR(t_quantile_975(60), 2.0003, 1e-4);
  EXPECT_NEAR(t_quantile_975(120), 1.9799, 1e-4);
  EXPECT_NEAR(t_quantile_975(1000000), 1.96, 1e-4);
}

TEST(precision_recall, OneForIdenticalSetsZeroForDisjointOnesHalfForHalf) {
  std::mt19937 rng(8);
  const int64_t dim = 10, n = 200;
  const std::vector<float> real = gaussian(rng, n, dim);
  const PrecisionRecall same = precision_recall(real, n, real, n, dim);
  EXPECT_EQ(same.precision, 1.0);
  EXPECT_EQ(same.recall, 1.0);
  const PrecisionRecall far = precision_recall(real, n, gaussian(rng, n, dim, 20.0f), n, dim);
  EXPECT_EQ(far.precision, 0.0);
  EXPECT_EQ(far.recall, 0.0);
  // Half the generated vectors are real ones, half far away: precision exactly 1/2; recall drops
  // (the far half covers nothing, the real half only part of the rest).
  std::vector<float> half(real.begin(), real.begin() + n / 2 * dim);
  const std::vector<float> away = gaussian(rng, n / 2, dim, 20.0f);
  half.insert(half.end(), away.begin(), away.end());
  const PrecisionRecall h = precision_recall(real, n, half, n, dim);
  EXPECT_EQ(h.precision, 0.5);
  EXPECT_GE(h.recall, 0.5);
  EXPECT_LT(h.recall, 1.0);
  // A narrower generated distribution (mode dropping) keeps precision and loses recall.
  const PrecisionRecall narrow = precision_recall(real, n, gaussian(rng, n, dim, 0, 0.3f), n, dim);
  EXPECT_GT(narrow.precision, 0.9);
  EXPECT_LT(narrow.recall, 0.5);
  EXPECT_THROW(precision_recall(real, 3, real, n, dim), Error);
}

ImageRecord image(uint64_t seed, int64_t predicted, int64_t nfe, double ms, std::mt19937& rng, int dim) {
  ImageRecord r;
  r.seed = seed;
  r.class_id = static_cast<int64_t>(seed % 10);
  r.predicted = predicted;
  r.tokens = {1, 2, 3, 4};
  r.nfe = nfe;
  r.wall_ms = ms;
  std::normal_distribution<float> g;
  for (int i = 0; i < dim; ++i) r.features.push_back(g(rng));
  return r;
}

// The quality numbers of a run come from which images it holds, not their order (a resumed live
// run holds its earlier images first; a merge sorts by seed). Paired differences use common seeds.
TEST(run_quality, SameImagesInAnyOrderGiveTheSameNumbers) {
  const int dim = 6;
  std::mt19937 rng(9);
  SampleSet ar, run;
  for (uint64_t s = 0; s < 80; ++s) {
    ar.images.push_back(image(s, static_cast<int64_t>(s % 10), 64, 100.0 + static_cast<double>(s % 7), rng, dim));
    if (s >= 5)  // the run lacks seeds 0..4
      run.images.push_back(image(s, s % 4 ? static_cast<int64_t>(s % 10) : 0, 20 + static_cast<int64_t>(s % 3),
                                 40.0 + static_cast<double>(s % 5), rng, dim));
  }
  SampleSet shuffled = run;
  std::shuffle(shuffled.images.begin(), shuffled.images.end(), rng);
  ReferenceSet reference;
  reference.features = gaussian(rng, 300, dim);
  reference.feature_count = 300;
  reference.stats = gaussian_stats(reference.features, 300, dim);
  const QualityReference qr = quality_reference(reference);
  const SampleSummary sa = summarize_samples(ar), s1 = summarize_samples(run), s2 = summarize_samples(shuffled);
  EXPECT_EQ(s2.image_seeds, s1.image_seeds);
  EXPECT_TRUE(std::is_sorted(s2.image_seeds.begin(), s2.image_seeds.end()));
  const RunQuality q1 = assess_quality(s1, &sa, qr, {true}), q2 = assess_quality(s2, &sa, qr, {true});
  ASSERT_TRUE(q1.kid && q1.kid_se && q1.fid && q1.fid_inf && q1.class_accuracy_ci && q1.precision && q1.recall);
  EXPECT_NEAR(*q2.kid, *q1.kid, 1e-9);
  EXPECT_NEAR(*q2.fid_inf, *q1.fid_inf, 1e-9);
  EXPECT_EQ(q2.class_accuracy_ci->low, q1.class_accuracy_ci->low);
  EXPECT_EQ(q2.class_accuracy_ci->high, q1.class_accuracy_ci->high);
  EXPECT_EQ(*q2.precision, *q1.precision);
  EXPECT_TRUE(q1.class_accuracy_ci->contains(s1.class_accuracy));
  ASSERT_TRUE(q1.nfe_vs_ar && q1.time_vs_ar && q1.accuracy_vs_ar);
  EXPECT_EQ(q1.nfe_vs_ar->pairs, 75);
  EXPECT_NEAR(q1.nfe_vs_ar->diff, 21.0 - 64.0, 0.05);
  EXPECT_TRUE(q1.nfe_vs_ar->significant());
  // Right on all of ar's, wrong on every fourth seed of the run's: -25 points or so.
  EXPECT_LT(q1.accuracy_vs_ar->diff, -0.15);
  // ar against itself: no paired differences, FID against ar 0.
  const RunQuality qa = assess_quality(sa, &sa, qr, {});
  EXPECT_FALSE(qa.nfe_vs_ar);
  EXPECT_NEAR(*qa.fid_vs_ar, 0.0, 1e-9);
  EXPECT_FALSE(qa.precision);
  // Without a reference: intervals and differences only.
  const RunQuality none = assess_quality(s1, &sa, quality_reference(ReferenceSet{}), {true});
  EXPECT_FALSE(none.kid || none.fid || none.fid_inf || none.precision);
  EXPECT_TRUE(none.class_accuracy_ci && none.nfe_vs_ar && none.fid_vs_ar);
}

}  // namespace
}  // namespace vkspec
