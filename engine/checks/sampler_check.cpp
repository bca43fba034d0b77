// ops::sampler against ref::sampler. Both tokens and probabilities must be bit-identical: the
// error is the probabilities' normalised error plus 1 + the mismatch fraction if any token differs.
#include "engine/checks/op_check.h"
#include "engine/ops/sampler.h"
#include "engine/ref/sampler_ref.h"

#include <cmath>
#include <random>

namespace vkspec {
namespace {

struct Case {
  uint32_t rows, vocab;
  ops::SamplerParams params;
  float logit_scale = 4.0f;
  bool quantise = false;         // logits on a coarse grid, so ties are common
  bool per_row_purpose = false;  // a purposes tensor: each row draws for its own end
  bool per_row_seed = false;     // a seeds tensor: each row draws under its own seed (batched images)
};

// Row r alone, as a one-row sampler input ([1, V], or [2, V] with CFG: cond, then uncond).
std::vector<float> row_logits(const std::vector<float>& logits, const Case& k, uint32_t r) {
  const size_t V = k.vocab;
  auto row = [&](size_t i) { return std::vector<float>(logits.begin() + i * V, logits.begin() + (i + 1) * V); };
  if (!k.params.cfg) return row(r);
  const bool interleaved = k.params.cfg_layout == ops::CfgLayout::Interleaved;
  std::vector<float> both = row(interleaved ? 2 * r : r), uncond = row(interleaved ? 2 * r + 1 : k.rows + r);
  both.insert(both.end(), uncond.begin(), uncond.end());
  return both;
}

// The reference with a purpose or a seed per row: each row sampled alone under its own.
ref::SamplerResult reference_per_row(const std::vector<float>& logits, const Case& k,
                                     const std::vector<uint32_t>& positions, const std::vector<uint32_t>& purposes,
                                     const std::vector<uint64_t>& seeds) {
  ref::SamplerResult all;
  for (uint32_t r = 0; r < k.rows; ++r) {
    ops::SamplerParams p = k.params;
    if (k.per_row_purpose) p.purpose = purposes[r];
    if (k.per_row_seed) p.seed = seeds[r];
    p.cfg_layout = ops::CfgLayout::Halves;
    const ref::SamplerResult one = ref::sampler(row_logits(logits, k, r), k.vocab, {positions[r]}, p);
    all.probs.insert(all.probs.end(), one.probs.begin(), one.probs.end());
    all.tokens.push_back(one.tokens[0]);
  }
  return all;
}

CheckResult check_sampler(Context& ctx, const Case& k) {
  const ops::SamplerParams& prm = k.params;
  const uint32_t in_rows = prm.cfg ? 2 * k.rows : k.rows;
  auto logits = random_floats(size_t{in_rows} * k.vocab, 11 + k.vocab + k.rows, -k.logit_scale, k.logit_scale);
  if (k.quantise)
    for (float& x : logits) x = std::round(x * 2.0f) * 0.5f;
  std::mt19937 rng(k.rows * 31 + k.vocab);
  std::vector<uint32_t> positions(k.rows);
  for (auto& p : positions) p = rng() % 100000;

  Tensor tl = upload_floats(ctx, logits, DType::F32, {in_rows, k.vocab}, "logits");
  Tensor tp = ctx.tensor(DType::U32, {k.rows}, "positions");
  ctx.upload(tp, positions.data(), positions.size() * 4);
  Tensor probs = ctx.tensor(DType::F32, {k.rows, k.vocab}, "probs");
  Tensor tokens = ctx.tensor(DType::U32, {k.rows}, "tokens");
  std::vector<uint32_t> purposes(k.rows);
  for (auto& p : purposes) p = philox::purpose_word(philox::Purpose::DraftHead, rng() % 64);
  Tensor tpur = ctx.tensor(DType::U32, {k.rows}, "purposes");
  ctx.upload(tpur, purposes.data(), purposes.size() * 4);
  std::vector<uint64_t> seeds(k.rows);
  for (auto& sd : seeds) sd = (uint64_t{rng()} << 32) | rng();
  Tensor tseeds = ctx.tensor(DType::U32, {k.rows, 2}, "seeds");
  ctx.upload(tseeds, seeds.data(), seeds.size() * 8);  // little-endian: low word first, as the op reads
  CommandStream s(ctx);
  ops::sampler(s, tl, tp, prm, probs, tokens, k.per_row_purpose ? tpur.view() : TensorView{},
               k.per_row_seed ? tseeds.view() : TensorView{});
  s.submit_and_wait();

  const ref::SamplerResult want = k.per_row_purpose || k.per_row_seed
                                      ? reference_per_row(logits, k, positions, purposes, seeds)
                                      : ref::sampler(logits, k.vocab, positions, prm);
  const double perr = normalised_error(download_floats(ctx, probs), want.probs);
  size_t bad = 0;
  if (prm.mode != ops::SampleMode::None) {
    std::vector<uint32_t> got(k.rows);
    ctx.download(tokens, got.data(), got.size() * 4);
    for (uint32_t r = 0; r < k.rows; ++r) bad += got[r] != want.tokens[r];
  }
  return {perr + (bad ? 1.0 + static_cast<double>(bad) / k.rows : 0.0), 0.0,
          "rows=" + std::to_string(k.rows) + " V=" + std::to_string(k.vocab) + " probs err " + std::to_string(perr) +
              ", " + std::to_string(bad) + " token mismatches"};
}

ops::SamplerParams params(ops::SampleMode mode, float t, uint32_t top_k, float top_p, uint64_t seed) {
  ops::SamplerParams p;
  p.mode = mode;
  p.temperature = t;
  p.top_k = top_k;
  p.top_p = top_p;
  p.seed = seed;
  return p;
}

ops::SamplerParams with_cfg(ops::SamplerParams p, float scale, ops::CfgLayout layout) {
  p.cfg = true;
  p.cfg_scale = scale;
  p.cfg_layout = layout;
  return p;
}

ops::SamplerParams with_entropy(ops::SamplerParams p, float a = 2.5f, float b = 3.0f, float c = 0.6f) {
  p.entropy = {true, a, b, c};
  return p;
}

Case per_row(Case k) {
  k.per_row_purpose = true;
  return k;
}

Case seed_per_row(Case k) {
  k.per_row_seed = true;
  return k;
}

using M = ops::SampleMode;

VKSPEC_OP_CHECK("sampler", "categorical rows=512 V=1000 plain", [](Context& c) {
  return check_sampler(c, {512, 1000, params(M::Categorical, 1.0f, 0, 1.0f, 1)});
});
VKSPEC_OP_CHECK("sampler", "categorical rows=300 V=1003 T=0.7 top_k=50", [](Context& c) {
  return check_sampler(c, {300, 1003, params(M::Categorical, 0.7f, 50, 1.0f, 2)});
});
VKSPEC_OP_CHECK("sampler", "categorical rows=200 V=999 top_p=0.8", [](Context& c) {
  return check_sampler(c, {200, 999, params(M::Categorical, 1.0f, 0, 0.8f, 3)});
});
VKSPEC_OP_CHECK("sampler", "categorical rows=64 V=16384 T=1.3 top_k=2000 top_p=0.95", [](Context& c) {
  return check_sampler(c, {64, 16384, params(M::Categorical, 1.3f, 2000, 0.95f, 4)});
});
VKSPEC_OP_CHECK("sampler", "categorical rows=128 V=517 ties top_k=7 top_p=0.5", [](Context& c) {
  return check_sampler(c, {128, 517, params(M::Categorical, 1.0f, 7, 0.5f, 5), 3.0f, true});
});
VKSPEC_OP_CHECK("sampler", "categorical rows=128 V=200 ties top_k=9 top_p=0.6", [](Context& c) {
  return check_sampler(c, {128, 200, params(M::Categorical, 1.0f, 9, 0.6f, 14), 3.0f, true});
});
VKSPEC_OP_CHECK("sampler", "gumbel rows=400 V=1000 T=0.9 top_k=100", [](Context& c) {
  return check_sampler(c, {400, 1000, params(M::GumbelMax, 0.9f, 100, 1.0f, 6)});
});
VKSPEC_OP_CHECK("sampler", "gumbel rows=32 V=16384 top_p=0.9", [](Context& c) {
  return check_sampler(c, {32, 16384, params(M::GumbelMax, 1.0f, 0, 0.9f, 7)});
});
VKSPEC_OP_CHECK("sampler", "argmax rows=256 V=777 ties", [](Context& c) {
  return check_sampler(c, {256, 777, params(M::Argmax, 1.0f, 0, 1.0f, 8), 2.0f, true});
});
VKSPEC_OP_CHECK("sampler", "probs only rows=100 V=5 top_k=2 T=0", [](Context& c) {
  return check_sampler(c, {100, 5, params(M::None, 0.0f, 2, 1.0f, 9)});
});
VKSPEC_OP_CHECK("sampler", "cfg halves rows=50 V=1001 s=4 top_k=100", [](Context& c) {
  return check_sampler(c,
                       {50, 1001, with_cfg(params(M::Categorical, 1.0f, 100, 1.0f, 10), 4.0f, ops::CfgLayout::Halves)});
});
// Hawk's heads: a purpose per row, CFG pairs interleaved (each group's [cond, uncond] in turn).
VKSPEC_OP_CHECK("sampler", "cfg interleaved rows=9 V=1024 purpose per row", [](Context& c) {
  return check_sampler(
      c, per_row({9, 1024, with_cfg(params(M::Categorical, 1.0f, 0, 1.0f, 16), 2.0f, ops::CfgLayout::Interleaved)}));
});
VKSPEC_OP_CHECK("sampler", "gumbel rows=40 V=999 top_k=50 purpose per row", [](Context& c) {
  return check_sampler(c, per_row({40, 999, params(M::GumbelMax, 0.8f, 50, 1.0f, 17)}));
});
VKSPEC_OP_CHECK("sampler", "cfg halves rows=12 V=500 top_p=0.9 purpose per row", [](Context& c) {
  return check_sampler(c, per_row({12, 500,
                                   with_cfg(params(M::Categorical, 1.0f, 0, 0.9f, 18), 3.0f, ops::CfgLayout::Halves)}));
});
// Batched images: CFG halves, a seed per row (each image its own), categorical and Gumbel-max.
VKSPEC_OP_CHECK("sampler", "cfg halves rows=16 V=1024 seed per row", [](Context& c) {
  return check_sampler(
      c, seed_per_row({16, 1024, with_cfg(params(M::Categorical, 1.0f, 0, 1.0f, 19), 4.0f, ops::CfgLayout::Halves)}));
});
VKSPEC_OP_CHECK("sampler", "gumbel rows=7 V=999 top_k=50 seed and purpose per row", [](Context& c) {
  return check_sampler(c, seed_per_row(per_row({7, 999, params(M::GumbelMax, 0.8f, 50, 1.0f, 20)})));
});
VKSPEC_OP_CHECK("sampler", "cfg interleaved rows=33 V=16384 s=1.5 top_k=1000 gumbel", [](Context& c) {
  return check_sampler(c, {33, 16384,
                           with_cfg(params(M::GumbelMax, 1.0f, 1000, 1.0f, 11), 1.5f, ops::CfgLayout::Interleaved)});
});
// 1025 interleaved CFG rows of V = 16384 span 134 MB of logits: more than lavapipe's 128 MiB
// maxStorageBufferRange, so the op splits the rows over two dispatches.
VKSPEC_OP_CHECK("sampler", "cfg interleaved rows=1025 V=16384 argmax (split dispatch)", [](Context& c) {
  return check_sampler(c, {1025, 16384,
                           with_cfg(params(M::Argmax, 1.0f, 0, 1.0f, 15), 2.0f, ops::CfgLayout::Interleaved)});
});
VKSPEC_OP_CHECK("sampler", "top_p=0 rows=64 V=300 ties", [](Context& c) {
  return check_sampler(c, {64, 300, params(M::Categorical, 1.0f, 0, 0.0f, 12), 1.0f, true});
});
// The entropy-aware temperature (step E): unfiltered, each filter alone and together, CFG in
// both layouts, every draw mode, a purpose per row, ties, and logits spread wide enough (scale
// 40) that top-k keeps tokens whose untempered weight is below exp_det's cutoff but whose
// tempered one is not.
VKSPEC_OP_CHECK("sampler", "entropy categorical rows=256 V=1000 plain", [](Context& c) {
  return check_sampler(c, {256, 1000, with_entropy(params(M::Categorical, 1.0f, 0, 1.0f, 19))});
});
VKSPEC_OP_CHECK("sampler", "entropy categorical rows=64 V=16384 T=1.4 cfg halves s=4", [](Context& c) {
  return check_sampler(
      c, {64, 16384, with_cfg(with_entropy(params(M::Categorical, 1.4f, 0, 1.0f, 20)), 4.0f, ops::CfgLayout::Halves)});
});
VKSPEC_OP_CHECK("sampler", "entropy categorical rows=100 V=1003 top_k=900 scale 40", [](Context& c) {
  return check_sampler(c, {100, 1003, with_entropy(params(M::Categorical, 1.0f, 900, 1.0f, 21)), 40.0f});
});
VKSPEC_OP_CHECK("sampler", "entropy gumbel rows=100 V=999 top_p=0.8 a=1 b=2 c=0.5", [](Context& c) {
  return check_sampler(c, {100, 999, with_entropy(params(M::GumbelMax, 0.9f, 0, 0.8f, 22), 1.0f, 2.0f, 0.5f)});
});
VKSPEC_OP_CHECK("sampler", "entropy categorical rows=32 V=16384 top_k=2000 top_p=0.95 cfg interleaved", [](Context& c) {
  return check_sampler(c, {32, 16384,
                           with_cfg(with_entropy(params(M::Categorical, 1.3f, 2000, 0.95f, 23)), 2.0f,
                                    ops::CfgLayout::Interleaved)});
});
VKSPEC_OP_CHECK("sampler", "entropy gumbel rows=128 V=517 ties top_k=7 top_p=0.5", [](Context& c) {
  return check_sampler(c, {128, 517, with_entropy(params(M::GumbelMax, 1.0f, 7, 0.5f, 24)), 3.0f, true});
});
VKSPEC_OP_CHECK("sampler", "entropy argmax and probs only rows=64 V=300 ties top_k=20", [](Context& c) {
  const CheckResult a = check_sampler(c, {64, 300, with_entropy(params(M::Argmax, 1.0f, 20, 1.0f, 25)), 2.0f, true});
  const CheckResult n = check_sampler(c, {64, 300, with_entropy(params(M::None, 1.0f, 20, 1.0f, 26)), 2.0f, true});
  return a.error >= n.error ? a : n;
});
VKSPEC_OP_CHECK("sampler", "entropy cfg interleaved rows=9 V=1024 top_k=100 purpose per row", [](Context& c) {
  return check_sampler(c, per_row({9, 1024,
                                   with_cfg(with_entropy(params(M::Categorical, 1.0f, 100, 1.0f, 27)), 2.0f,
                                            ops::CfgLayout::Interleaved)}));
});
VKSPEC_OP_CHECK("sampler", "rows=1 V=1", [](Context& c) {
  return check_sampler(c, {1, 1, params(M::Categorical, 1.0f, 0, 0.5f, 13)});
});

}  // namespace
}  // namespace vkspec
