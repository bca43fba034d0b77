// Statistical guarantees of the speculative primitives, on the GPU, many draws per dispatch
// (fixed seeds, chi-square at significance 0.001):
//  - drafting x ~ q, accepting with spec_accept and resampling rejections with
//    spec_residual_sample yields tokens distributed exactly as the target p (lossless), and the
//    same test catches a subtly wrong pipeline (acceptance computed with the unfiltered draft
//    distribution while drafting from the top-k filtered one);
//  - that pipeline is a maximal coupling: P(y == x) = 1 - TV(p, q);
//  - Gumbel-max draws from p and q with shared noise collide with probability
//    >= (1 - TV) / (1 + TV), and independent noise does not reach that.
#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"
#include "tests/support/chi_square.h"
#include "tests/support/sampling_helpers.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using philox::Purpose;
using philox::purpose_word;
using testing::chi_square;

constexpr uint32_t kVocab = 48;
constexpr uint32_t kDraws = 30000;
constexpr uint64_t kSeed = 0x5A17E5EEDull;

// Logits with everything outside the top k set to -inf: what top-k filtering does (LlamaGen),
// done once here so that the many-row dispatches skip the per-row selection.
std::vector<float> top_k_filtered(std::vector<float> logits, uint32_t k) {
  std::vector<float> sorted = logits;
  std::sort(sorted.begin(), sorted.end(), std::greater<float>());
  for (float& x : logits)
    if (x < sorted[k - 1]) x = -INFINITY;
  return logits;
}

struct Pair {
  std::vector<float> target_logits;  // top-20 filtered
  std::vector<float> draft_logits;   // top-12 filtered: the distribution drafts come from
  std::vector<float> draft_unfiltered;
};

// A target and a correlated but different draft, as a small draft model would be.
Pair make_pair(uint64_t seed) {
  Pair pr;
  const std::vector<float> target = random_floats(kVocab, seed, -3.0f, 3.0f);
  const std::vector<float> noise = random_floats(kVocab, seed + 1000, -1.5f, 1.5f);
  pr.draft_unfiltered.resize(kVocab);
  for (uint32_t i = 0; i < kVocab; ++i) pr.draft_unfiltered[i] = 0.8f * target[i] + noise[i];
  pr.target_logits = top_k_filtered(target, 20);
  pr.draft_logits = top_k_filtered(pr.draft_unfiltered, 12);
  return pr;
}

ops::SamplerParams draft_params() {
  ops::SamplerParams p;
  p.temperature = 0.9f;
  p.mode = ops::SampleMode::Categorical;
  p.seed = kSeed;
  p.purpose = purpose_word(Purpose::Draft);
  return p;
}

ops::SamplerParams target_params() {
  ops::SamplerParams p;
  p.mode = ops::SampleMode::None;
  return p;
}

class lossless_sampling : public testing::VulkanTest {
 protected:
  struct Run {
    std::vector<uint32_t> draft, accept, token;
    std::vector<double> p, q;  // target and (filtered) draft distributions
  };

  // One submit: draft sampler, target sampler, acceptance, resolve. biased: acceptance and
  // residual see the draft's distribution without its top-k filter.
  Run speculate(const Pair& pr, bool biased, uint32_t n = kDraws) {
    Context& c = ctx();
    Tensor tl = upload_floats(c, testing::replicate_rows(pr.target_logits, n), DType::F32, {n, kVocab}, "target");
    Tensor dl = upload_floats(c, testing::replicate_rows(pr.draft_logits, n), DType::F32, {n, kVocab}, "draft");
    Tensor pos = testing::upload_u32(c, testing::iota_positions(n), "positions");
    Tensor p = c.tensor(DType::F32, {n, kVocab}, "p"), q = c.tensor(DType::F32, {n, kVocab}, "q");
    Tensor q_unfiltered = c.tensor(DType::F32, {n, kVocab}, "q unfiltered");
    Tensor x = c.tensor(DType::U32, {n}, "x"), acc = c.tensor(DType::U32, {n}, "accept");
    Tensor y = c.tensor(DType::U32, {n}, "y");
    CommandStream s(c);
    ops::sampler(s, dl, pos, draft_params(), q, x);
    ops::sampler(s, tl, {}, target_params(), p, {});
    const TensorView q_seen = biased ? q_unfiltered.view() : q.view();
    Tensor ul;
    if (biased) {
      ul = upload_floats(c, testing::replicate_rows(pr.draft_unfiltered, n), DType::F32, {n, kVocab}, "unfiltered");
      ops::SamplerParams unf = draft_params();
      unf.mode = ops::SampleMode::None;
      ops::sampler(s, ul, {}, unf, q_unfiltered, {});
    }
    ops::spec_accept(s, p, q_seen, x, pos, {kSeed, purpose_word(Purpose::Accept)}, acc);
    ops::spec_residual_sample(s, p, q_seen, pos, {kSeed, purpose_word(Purpose::Residual)}, y, acc, x);
    s.submit_and_wait();
    Run r{testing::download_u32(c, x), testing::download_u32(c, acc), testing::download_u32(c, y),
          testing::row_of(download_floats(c, p), kVocab), testing::row_of(download_floats(c, q), kVocab)};
    return r;
  }

  // The target's and the draft's distributions (one row each).
  std::pair<std::vector<double>, std::vector<double>> distributions(const Pair& pr) {
    Context& c = ctx();
    Tensor tl = upload_floats(c, pr.target_logits, DType::F32, {1, kVocab}, "target");
    Tensor dl = upload_floats(c, pr.draft_logits, DType::F32, {1, kVocab}, "draft");
    Tensor p = c.tensor(DType::F32, {1, kVocab}, "p"), q = c.tensor(DType::F32, {1, kVocab}, "q");
    ops::SamplerParams dp = draft_params();
    dp.mode = ops::SampleMode::None;
    CommandStream s(c);
    ops::sampler(s, tl, {}, target_params(), p, {});
    ops::sampler(s, dl, {}, dp, q, {});
    s.submit_and_wait();
    return {testing::row_of(download_floats(c, p), kVocab), testing::row_of(download_floats(c, q), kVocab)};
  }

  // Gumbel-max draws from target and draft; shared: the same (seed, position, purpose) noise.
  std::pair<std::vector<uint32_t>, std::vector<uint32_t>> gumbel_pair(const Pair& pr, bool shared) {
    Context& c = ctx();
    const uint32_t n = kDraws;
    Tensor tl = upload_floats(c, testing::replicate_rows(pr.target_logits, n), DType::F32, {n, kVocab}, "target");
    Tensor dl = upload_floats(c, testing::replicate_rows(pr.draft_logits, n), DType::F32, {n, kVocab}, "draft");
    Tensor pos = testing::upload_u32(c, testing::iota_positions(n), "positions");
    Tensor p = c.tensor(DType::F32, {n, kVocab}, "p"), q = c.tensor(DType::F32, {n, kVocab}, "q");
    Tensor yp = c.tensor(DType::U32, {n}, "yp"), yq = c.tensor(DType::U32, {n}, "yq");
    ops::SamplerParams tp = target_params(), dp = draft_params();
    tp.mode = dp.mode = ops::SampleMode::GumbelMax;
    tp.seed = dp.seed = kSeed;
    tp.purpose = purpose_word(Purpose::DraftGumbel);
    dp.purpose = shared ? tp.purpose : purpose_word(Purpose::DraftGumbel, 1);
    CommandStream s(c);
    ops::sampler(s, tl, pos, tp, p, yp);
    ops::sampler(s, dl, pos, dp, q, yq);
    s.submit_and_wait();
    return {testing::download_u32(c, yp), testing::download_u32(c, yq)};
  }
};

testing::ChiSquare fit(const std::vector<uint32_t>& tokens, std::vector<double> probs) {
  probs.push_back(0.0);  // out-of-range tokens are impossible
  return chi_square(testing::histogram(tokens, kVocab), probs);
}

TEST_F(lossless_sampling, AcceptOrResampleReproducesTarget) {
  for (uint64_t pair_seed : {1, 2, 3}) {
    const Run r = speculate(make_pair(pair_seed), false);
    EXPECT_TRUE(fit(r.draft, r.q).fits()) << "draft tokens vs q, pair " << pair_seed << ": " << fit(r.draft, r.q).str();
    const testing::ChiSquare c = fit(r.token, r.p);
    EXPECT_TRUE(c.fits()) << "pair " << pair_seed << ": " << c.str();
  }
}

// The bias is large (chi-square ~ 0.065 per draw against a critical value of 44), so a third of
// the draws suffice.
TEST_F(lossless_sampling, BiasedDraftDistributionIsDetected) {
  for (uint64_t pair_seed : {1, 2, 3}) {
    const Run r = speculate(make_pair(pair_seed), true, kDraws / 3);
    const testing::ChiSquare c = fit(r.token, r.p);
    EXPECT_FALSE(c.fits()) << "pair " << pair_seed << ": the biased pipeline passed: " << c.str();
  }
}

TEST_F(lossless_sampling, MaximalCouplingCollisionRate) {
  for (uint64_t pair_seed : {1, 2, 3}) {
    const Run r = speculate(make_pair(pair_seed), false);
    const double want = 1.0 - testing::total_variation(r.p, r.q);
    uint64_t same = 0, accepted = 0;
    for (uint32_t j = 0; j < kDraws; ++j) {
      same += r.token[j] == r.draft[j];
      accepted += r.accept[j];
      // A rejected draft is never the resampled token (the residual is 0 where q >= p).
      if (!r.accept[j]) {
        ASSERT_NE(r.token[j], r.draft[j]) << j;
      }
    }
    const double rate = static_cast<double>(same) / kDraws;
    const double sigma = std::sqrt(want * (1 - want) / kDraws);
    EXPECT_NEAR(rate, want, 4.5 * sigma) << "pair " << pair_seed;
    EXPECT_EQ(same, accepted);
  }
}

TEST_F(lossless_sampling, GumbelSharingCollisionBound) {
  for (uint64_t pair_seed : {1, 2}) {
    const Pair pr = make_pair(pair_seed);
    const auto [p, q] = distributions(pr);
    const double tv = testing::total_variation(p, q);
    const double bound = (1 - tv) / (1 + tv);
    auto rate = [&](const std::pair<std::vector<uint32_t>, std::vector<uint32_t>>& d) {
      uint64_t same = 0;
      for (uint32_t j = 0; j < kDraws; ++j) same += d.first[j] == d.second[j];
      return static_cast<double>(same) / kDraws;
    };
    const auto shared = gumbel_pair(pr, true);
    EXPECT_TRUE(fit(shared.first, p).fits()) << fit(shared.first, p).str();
    EXPECT_TRUE(fit(shared.second, q).fits()) << fit(shared.second, q).str();
    const double sigma = std::sqrt(bound * (1 - bound) / kDraws);
    EXPECT_GE(rate(shared), bound - 4.5 * sigma) << "pair " << pair_seed << " tv " << tv;
    // Independent noise collides with probability sum_i p_i q_i, below the bound here.
    double independent = 0;
    for (uint32_t i = 0; i < kVocab; ++i) independent += p[i] * q[i];
    ASSERT_LT(independent, bound - 0.05);
    if (pair_seed == 1) {
      EXPECT_NEAR(rate(gumbel_pair(pr, false)), independent, 4.5 * std::sqrt(independent / kDraws));
    }
  }
}

}  // namespace
}  // namespace vkspec
