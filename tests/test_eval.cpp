// Sample-quality measurement (eval/): Gaussian statistics, the Frechet distance against closed
// forms, the symmetric eigensolver, the Fashion-MNIST reader and the cached test-set statistics
// and features.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sys/stat.h>

#include "common/error.h"
#include "eval/fashion_mnist.h"
#include "eval/frechet.h"
#include "eval/reference_stats.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

GaussianStats stats_of(std::vector<double> mean, std::vector<double> cov) {
  GaussianStats s;
  s.dim = static_cast<int64_t>(mean.size());
  s.count = 100;
  s.mean = std::move(mean);
  s.cov = std::move(cov);
  return s;
}

TEST(Frechet, OneDimensionalClosedForm) {
  // (m1 - m2)^2 + (s1 - s2)^2 for N(m1, s1^2), N(m2, s2^2)
  EXPECT_NEAR(frechet_distance(stats_of({1.0}, {4.0}), stats_of({-2.0}, {9.0})), 9.0 + 1.0, 1e-9);
}

TEST(Frechet, RotatedCovariancesMatchTheDiagonalCase) {
  // S1 = R diag(1, 4, 9) R^T, S2 = R diag(4, 1, 16) R^T commute: sum (sqrt(a) - sqrt(b))^2 = 1 + 1 + 1
  const double c = std::cos(0.7), s = std::sin(0.7);
  const double R[9] = {c, -s, 0, s * 0.6, c * 0.6, -0.8, s * 0.8, c * 0.8, 0.6};
  auto rotate = [&](const std::vector<double>& d) {
    std::vector<double> m(9, 0.0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 3; ++k) m[i * 3 + j] += R[i * 3 + k] * d[k] * R[j * 3 + k];
    return m;
  };
  const GaussianStats a = stats_of({0, 0, 0}, rotate({1, 4, 9})), b = stats_of({0, 0, 1}, rotate({4, 1, 16}));
  EXPECT_NEAR(frechet_distance(a, b), 3.0 + 1.0, 1e-9);
  EXPECT_NEAR(frechet_distance(a, a), 0.0, 1e-9);
}

TEST(Frechet, EigenDecompositionReconstructs) {
  std::mt19937 rng(3);
  std::normal_distribution<double> g;
  const int n = 40;
  std::vector<double> a(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) a[i * n + j] = a[j * n + i] = g(rng);
  std::vector<double> w, v;
  symmetric_eigen(a, n, w, v);
  for (int i = 1; i < n; ++i) EXPECT_LE(w[i - 1], w[i]);
  double err = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += v[i * n + k] * w[k] * v[j * n + k];
      err = std::max(err, std::abs(s - a[i * n + j]));
    }
  EXPECT_LT(err, 1e-9);
}

TEST(Frechet, StatisticsOfSamples) {
  const std::vector<float> f = {1, 2, 3, 4, 5, 9};  // three 2-d vectors
  const GaussianStats s = gaussian_stats(f, 3, 2);
  EXPECT_DOUBLE_EQ(s.mean[0], 3.0);
  EXPECT_DOUBLE_EQ(s.mean[1], 5.0);
  EXPECT_DOUBLE_EQ(s.cov[0], 4.0);   // var(1, 3, 5)
  EXPECT_DOUBLE_EQ(s.cov[1], 7.0);   // cov((1, 3, 5), (2, 4, 9))
  EXPECT_DOUBLE_EQ(s.cov[3], 13.0);  // var(2, 4, 9)
  EXPECT_THROW(gaussian_stats(f, 1, 6), Error);
  // Samples of the same Gaussian are close; a shifted one is not.
  std::mt19937 rng(5);
  std::normal_distribution<float> g;
  std::vector<float> x(4000 * 4), y(4000 * 4);
  for (auto& v : x) v = g(rng);
  for (auto& v : y) v = g(rng) + 0.5f;
  const std::vector<float> first(x.begin(), x.begin() + 8000), second(x.begin() + 8000, x.end());
  const double same = frechet_distance(gaussian_stats(first, 2000, 4), gaussian_stats(second, 2000, 4));
  const double shifted = frechet_distance(gaussian_stats(x, 4000, 4), gaussian_stats(y, 4000, 4));
  EXPECT_LT(same, 0.05);
  EXPECT_NEAR(shifted, 4 * 0.25, 0.1);
}

bool have_dataset() {
  struct stat st;
  return stat((std::string(fashion_mnist_dir()) + "/t10k-images-idx3-ubyte.gz").c_str(), &st) == 0;
}

TEST(FashionMnistReader, PaddedImagesInUnitRangeWithLabels) {
  if (!have_dataset()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const FashionMnist d = load_fashion_mnist(fashion_mnist_dir(), "test", 50);
  ASSERT_EQ(d.count, 50);
  ASSERT_EQ(d.images.size(), 50u * 1024);
  for (int32_t l : d.labels) EXPECT_TRUE(l >= 0 && l < 10);
  float hi = -1;
  for (int64_t i = 0; i < d.count; ++i)
    for (int k = 0; k < 32; ++k) {
      EXPECT_EQ(d.images[i * 1024 + k], -1.0f);            // top padding row
      EXPECT_EQ(d.images[i * 1024 + k * 32 + 31], -1.0f);  // right padding column
    }
  for (float v : d.images) {
    EXPECT_TRUE(v >= -1.0f && v <= 1.0f);
    hi = std::max(hi, v);
  }
  EXPECT_EQ(hi, 1.0f);        // 255 somewhere
  EXPECT_EQ(d.labels[0], 9);  // the first test image is an ankle boot
  EXPECT_THROW(load_fashion_mnist("/nonexistent", "test"), Error);
  EXPECT_THROW(load_fashion_mnist(fashion_mnist_dir(), "validation"), Error);
}

class eval_reference : public testing::VulkanTest {};

TEST_F(eval_reference, TestSetStatisticsAreCachedAndClose) {
  const std::string clf = std::string(VKSPEC_ASSETS_DIR) + "/fmnist_classifier.safetensors";
  struct stat st;
  if (!have_dataset() || stat(clf.c_str(), &st) != 0) GTEST_SKIP() << "needs the dataset and the shipped classifier";
  const GaussianStats a = fashion_mnist_test_stats(ctx(), clf, fashion_mnist_dir(), 300);
  const GaussianStats b = fashion_mnist_test_stats(ctx(), clf, fashion_mnist_dir(), 300);  // from the cache
  EXPECT_EQ(a.count, 300);
  EXPECT_EQ(a.mean, b.mean);
  EXPECT_EQ(a.cov, b.cov);
  EXPECT_NEAR(frechet_distance(a, b), 0.0, 1e-6);
  // The cache keeps the feature vectors too (KID, precision and recall), and they are the ones the
  // statistics were computed from.
  const ReferenceSet r = fashion_mnist_test_reference(ctx(), clf, fashion_mnist_dir(), 300);
  ASSERT_EQ(r.feature_count, 300);
  ASSERT_EQ(r.features.size(), static_cast<size_t>(300 * a.dim));
  EXPECT_EQ(r.stats.mean, a.mean);
  const GaussianStats again = gaussian_stats(r.features, 300, a.dim);
  for (int64_t d = 0; d < a.dim; ++d) EXPECT_NEAR(again.mean[d], a.mean[d], 1e-9);
}

}  // namespace
}  // namespace vkspec
