// The GPU sampler's draws follow the probabilities it outputs (chi-square, fixed seeds), for
// categorical and Gumbel-max sampling with and without filtering, and those probabilities are
// LlamaGen's (temperature, top_k_top_p_filtering, softmax) computed independently in double; with
// the entropy-aware temperature, ARsample's `sample` (filtering the untempered logits, entropy of
// that distribution, then its temperature) in double.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/ops/sampler.h"
#include "tests/support/chi_square.h"
#include "tests/support/sampling_helpers.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using testing::chi_square;

constexpr uint32_t kVocab = 64;
constexpr uint32_t kDraws = 30000;

// LlamaGen's filtering in double: sort descending (ties by index), top-k, then keep while the
// exclusive cumulative probability is <= top_p, softmax over what is kept.
std::vector<double> llamagen_probs(const std::vector<float>& logits, const ops::SamplerParams& prm) {
  const size_t v = logits.size();
  std::vector<double> z(v);
  for (size_t i = 0; i < v; ++i) z[i] = static_cast<double>(logits[i]) / std::max(prm.temperature, 1e-5f);
  std::vector<size_t> order(v);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return z[a] > z[b]; });
  size_t keep = (prm.top_k > 0 && prm.top_k < v) ? prm.top_k : v;
  auto softmax_of_prefix = [&](size_t n) {
    std::vector<double> p(v, 0.0);
    double s = 0;
    for (size_t j = 0; j < n; ++j) s += std::exp(z[order[j]] - z[order[0]]);
    for (size_t j = 0; j < n; ++j) p[order[j]] = std::exp(z[order[j]] - z[order[0]]) / s;
    return p;
  };
  if (prm.top_p < 1.0f) {
    const std::vector<double> p = softmax_of_prefix(keep);
    double cum = 0;
    size_t n = 0;
    while (n < keep && (n == 0 || cum <= prm.top_p)) cum += p[order[n++]];
    keep = n;
  }
  return softmax_of_prefix(keep);
}

// ARsample's generate.py `sample` with enable_entropy_filtering, in double: LlamaGen's filters on
// the untempered logits, H = -sum p ln p of what they keep, T = T0 (a e^(-H / b) + c), then
// softmax(l / T) over the kept tokens.
std::vector<double> entropy_probs(const std::vector<float>& logits, const ops::SamplerParams& prm) {
  ops::SamplerParams untempered = prm;
  untempered.temperature = 1.0f;
  const std::vector<double> p = llamagen_probs(logits, untempered);
  double h = 0, m = -INFINITY, s = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] > 0) h -= p[i] * std::log(p[i]);
    if (p[i] > 0) m = std::max(m, static_cast<double>(logits[i]));
  }
  const double t = prm.temperature * (prm.entropy.a * std::exp(-h / prm.entropy.b) + prm.entropy.c);
  std::vector<double> q(p.size(), 0.0);
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] > 0) s += q[i] = std::exp((logits[i] - m) / t);
  for (double& x : q) x /= s;
  return q;
}

class SamplerStats : public testing::VulkanTest {
 protected:
  struct Draws {
    std::vector<uint32_t> tokens;
    std::vector<double> probs;  // row 0 of the GPU's probabilities
  };

  // The filtered cases cost several times more per row on lavapipe (radix selects), so they
  // take fewer draws.
  Draws draw(const std::vector<float>& logits, const ops::SamplerParams& prm) {
    Context& c = ctx();
    const uint32_t n = (prm.top_k || prm.top_p < 1.0f) ? kDraws * 2 / 3 : kDraws;
    Tensor tl = upload_floats(c, testing::replicate_rows(logits, n), DType::F32, {n, kVocab}, "logits");
    Tensor tp = testing::upload_u32(c, testing::iota_positions(n, 1000), "positions");
    Tensor probs = c.tensor(DType::F32, {n, kVocab}, "probs");
    Tensor tokens = c.tensor(DType::U32, {n}, "tokens");
    CommandStream s(c);
    ops::sampler(s, tl, tp, prm, probs, tokens);
    s.submit_and_wait();
    const std::vector<float> p = download_floats(c, probs);
    // Identical rows give identical probabilities, bit for bit.
    for (uint32_t r = 1; r < n; r += 997)
      EXPECT_TRUE(std::equal(p.begin(), p.begin() + kVocab, p.begin() + size_t{r} * kVocab)) << "row " << r;
    return {testing::download_u32(c, tokens), testing::row_of(p, kVocab)};
  }

  void expect_fits(const std::vector<float>& logits, ops::SamplerParams prm) {
    const Draws d = draw(logits, prm);
    const std::vector<double> want = prm.entropy.on ? entropy_probs(logits, prm) : llamagen_probs(logits, prm);
    for (uint32_t i = 0; i < kVocab; ++i) {
      EXPECT_NEAR(d.probs[i], want[i], 2e-6 + 2e-6 * want[i]) << "token " << i;
      EXPECT_EQ(d.probs[i] == 0.0, want[i] == 0.0) << "token " << i << " kept differently";
    }
    std::vector<double> expected = d.probs;
    expected.push_back(0.0);  // the out-of-range bin
    const testing::ChiSquare c = chi_square(testing::histogram(d.tokens, kVocab), expected);
    EXPECT_TRUE(c.fits()) << c.str();
  }
};

std::vector<float> test_logits(uint64_t seed, float scale) { return random_floats(kVocab, seed, -scale, scale); }

ops::SamplerParams make(ops::SampleMode mode, float t, uint32_t k, float p, uint64_t seed) {
  ops::SamplerParams prm;
  prm.mode = mode;
  prm.temperature = t;
  prm.top_k = k;
  prm.top_p = p;
  prm.seed = seed;
  return prm;
}

TEST_F(SamplerStats, CategoricalFollowsProbabilities) {
  expect_fits(test_logits(1, 2.5f), make(ops::SampleMode::Categorical, 1.0f, 0, 1.0f, 101));
}

TEST_F(SamplerStats, CategoricalTopKTopP) {
  expect_fits(test_logits(2, 3.0f), make(ops::SampleMode::Categorical, 0.8f, 24, 0.9f, 102));
}

TEST_F(SamplerStats, GumbelMaxFollowsProbabilities) {
  expect_fits(test_logits(3, 2.5f), make(ops::SampleMode::GumbelMax, 1.0f, 0, 1.0f, 103));
}

TEST_F(SamplerStats, GumbelMaxTopKTopP) {
  expect_fits(test_logits(4, 3.0f), make(ops::SampleMode::GumbelMax, 1.2f, 30, 0.8f, 104));
}

ops::SamplerParams entropy(ops::SamplerParams prm) {
  prm.entropy.on = true;
  return prm;
}

TEST_F(SamplerStats, EntropyTemperatureIsArsamples) {
  expect_fits(test_logits(7, 2.5f), entropy(make(ops::SampleMode::Categorical, 1.0f, 0, 1.0f, 106)));
}

// The released script's T0 = 1.4; top-p cuts the untempered distribution.
TEST_F(SamplerStats, EntropyTemperatureTopKTopPGumbel) {
  expect_fits(test_logits(8, 4.0f), entropy(make(ops::SampleMode::GumbelMax, 1.4f, 30, 0.8f, 107)));
}

// The same chi-square test rejects draws taken at a slightly different temperature.
TEST_F(SamplerStats, ChiSquareDetectsWrongTemperature) {
  const std::vector<float> logits = test_logits(5, 2.5f);
  const Draws d = draw(logits, make(ops::SampleMode::Categorical, 1.1f, 0, 1.0f, 105));
  std::vector<double> expected = llamagen_probs(logits, make(ops::SampleMode::Categorical, 1.0f, 0, 1.0f, 0));
  expected.push_back(0.0);
  const testing::ChiSquare c = chi_square(testing::histogram(d.tokens, kVocab), expected);
  EXPECT_FALSE(c.fits()) << c.str();
}

TEST_F(SamplerStats, ArgmaxIsTheLowestMaximum) {
  std::vector<float> logits = test_logits(6, 1.0f);
  logits[17] = logits[40] = 5.0f;
  const Draws d = draw(logits, make(ops::SampleMode::Argmax, 1.0f, 0, 1.0f, 0));
  for (uint32_t t : d.tokens) ASSERT_EQ(t, 17u);
}

}  // namespace
}  // namespace vkspec
