// The counter-based RNG and the deterministic float functions on the CPU (the GPU's identity with
// them is the philox_fill / sampler op checks).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "engine/ops/det_math.h"
#include "engine/ops/philox.h"

namespace vkspec {
namespace {

// Random123's known-answer vectors for Philox4x32-10 (counter words, then key words).
TEST(Philox, KnownAnswers) {
  using philox::Block;
  EXPECT_EQ(philox::philox4x32_10({0, 0, 0, 0}, 0, 0), (Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox::philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff),
            (Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox::philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0),
            (Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, KeyLayout) {
  const uint64_t seed = 0x0123456789ABCDEFull;
  const uint32_t purpose = philox::purpose_word(philox::Purpose::Residual, 5);
  EXPECT_EQ(purpose, 3u | (5u << 8));
  const philox::Block b = philox::philox4x32_10({77, purpose, 2, 0}, 0x89ABCDEFu, 0x01234567u);
  for (uint32_t w = 0; w < 4; ++w) EXPECT_EQ(philox::bits(seed, 77, purpose, 8 + w), b[w]);
  // Every key field changes the stream.
  const uint32_t x = philox::bits(seed, 77, purpose, 9);
  EXPECT_NE(x, philox::bits(seed + 1, 77, purpose, 9));
  EXPECT_NE(x, philox::bits(seed ^ (1ull << 40), 77, purpose, 9));
  EXPECT_NE(x, philox::bits(seed, 78, purpose, 9));
  EXPECT_NE(x, philox::bits(seed, 77, philox::purpose_word(philox::Purpose::Residual, 6), 9));
  EXPECT_NE(x, philox::bits(seed, 77, purpose, 13));
}

TEST(Philox, UniformIsExactAndInRange) {
  EXPECT_EQ(philox::to_uniform(0), 0.0f);
  EXPECT_EQ(philox::to_uniform(0xFFFFFFFFu), 1.0f - std::ldexp(1.0f, -24));
  EXPECT_EQ(philox::to_uniform(0x80000000u), 0.5f);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const float u = philox::uniform(1, static_cast<uint32_t>(i), 0, 0);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    ASSERT_EQ(static_cast<double>(u) * 16777216.0, std::floor(static_cast<double>(u) * 16777216.0));
    sum += u;
  }
  EXPECT_NEAR(sum / n, 0.5, 4 * std::sqrt(1.0 / 12 / n));
}

TEST(Philox, GumbelMoments) {
  EXPECT_TRUE(std::isfinite(philox::to_gumbel(0)));
  EXPECT_TRUE(std::isfinite(philox::to_gumbel(0xFFFFFFFFu)));
  double s1 = 0, s2 = 0;
  const int n = 400000;
  for (int i = 0; i < n; ++i) {
    const double g = philox::gumbel(9, 3, philox::purpose_word(philox::Purpose::Test), static_cast<uint32_t>(i));
    s1 += g;
    s2 += g * g;
  }
  const double mean = s1 / n, var = s2 / n - mean * mean;
  const double pi2_6 = M_PI * M_PI / 6;
  EXPECT_NEAR(mean, 0.5772156649, 4 * std::sqrt(pi2_6 / n));
  EXPECT_NEAR(var, pi2_6, 0.03);
}

TEST(DetMath, ExpAccuracy) {
  EXPECT_EQ(det::exp_det(0.0f), 1.0f);
  EXPECT_EQ(det::exp_det(-64.5f), 0.0f);
  EXPECT_EQ(det::exp_det(-INFINITY), 0.0f);
  EXPECT_EQ(det::exp_det(NAN), 0.0f);
  double worst = 0;
  for (int i = 0; i <= 1000000; ++i) {
    const float x = -64.0f * static_cast<float>(i) / 1000000.0f;
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::fabs(det::exp_det(x) - want) / want);
    ASSERT_GE(det::exp_det(x), det::kFloatMin);  // never a denormal
  }
  EXPECT_LT(worst, 2.5e-7);
}

TEST(DetMath, LogAccuracy) {
  EXPECT_EQ(det::log_det(1.0f), 0.0f);
  EXPECT_EQ(det::log_det(0.0f), -INFINITY);
  EXPECT_EQ(det::log_det(-1.0f), -INFINITY);
  double worst = 0;
  for (int e = -126; e < 128; ++e) {
    for (int i = 0; i < 2000; ++i) {
      const float x = std::ldexp(1.0f + static_cast<float>(i) / 2000.0f, e);
      const double want = std::log(static_cast<double>(x));
      const double err = std::fabs(det::log_det(x) - want);
      worst = std::max(worst, want == 0 ? err : err / std::fabs(want));
    }
  }
  EXPECT_LT(worst, 2.5e-7);
}

TEST(DetMath, ReciprocalAccuracy) {
  EXPECT_EQ(det::recip_det(1.0f), 1.0f);
  EXPECT_EQ(det::recip_det(2.0f), 0.5f);
  double worst = 0;
  for (int e = -100; e <= 100; ++e) {
    for (int i = 0; i < 5000; ++i) {
      const float x = std::ldexp(1.0f + static_cast<float>(i) / 5000.0f, e);
      worst = std::max(worst, std::fabs(det::recip_det(x) * static_cast<double>(x) - 1.0));
    }
  }
  EXPECT_LT(worst, 2.5e-7);
}

TEST(DetMath, OrderKey) {
  const float v[] = {-INFINITY, -3.5f, -1e-30f, -0.0f, 0.0f, 1e-30f, 2.0f, INFINITY};
  for (size_t i = 0; i + 1 < sizeof(v) / sizeof(v[0]); ++i) {
    if (v[i] == v[i + 1]) {
      EXPECT_EQ(det::order_key(v[i]), det::order_key(v[i + 1]));
    } else {
      EXPECT_LT(det::order_key(v[i]), det::order_key(v[i + 1]));
    }
    if (v[i] != 0.0f) {
      EXPECT_EQ(det::key_float(det::order_key(v[i])), v[i]);
    }
  }
}

TEST(DetMath, ChunkTreeAndDescent) {
  for (uint32_t n : {1u, 3u, 4u, 255u, 1000u, 1024u, 1025u, 16384u, 70001u}) {
    const uint32_t c = det::chunk_size(n);
    EXPECT_EQ(c % 4, 0u);
    EXPECT_LE((n + c - 1) / c, det::kMaxChunks) << n;
    EXPECT_EQ(det::chunk_count(n), (n + c - 1) / c);
    EXPECT_GE(det::tree_leaves(n), det::chunk_count(n));
    EXPECT_LT(det::tree_leaves(n), 2 * det::chunk_count(n));
    std::vector<float> w(n);
    for (uint32_t i = 0; i < n; ++i) w[i] = (i % 5 == 2) ? 0.0f : 1.0f + static_cast<float>(i % 7);
    auto weight = [&](uint32_t i) { return w[i]; };
    const det::ChunkTree t = det::chunk_tree(n, weight);
    double exact = 0;
    for (float x : w) exact += x;
    EXPECT_NEAR(t.total(), exact, exact * 1e-6);
    // The walk inverts the CDF: each positive weight owns [prefix, prefix + w) of the targets.
    std::set<uint32_t> seen;
    for (int k = 0; k < 2000; ++k) {
      const float target = t.total() * static_cast<float>(k) / 2000.0f;
      const uint32_t i = det::descend(t, target, weight);
      ASSERT_LT(i, n);
      ASSERT_GT(w[i], 0.0f);
      seen.insert(i);
    }
    EXPECT_GE(seen.size(), std::min<size_t>(n - n / 5 - 1, 1000) / 2);
    EXPECT_EQ(det::descend(t, 0.0f, weight), 0u);            // w[0] > 0
    EXPECT_GT(w[det::descend(t, t.total(), weight)], 0.0f);  // past the end: the last positive weight
  }
}

}  // namespace
}  // namespace vkspec
