#include <cmath>
#include <random>

#include "engine/checks/op_check.h"
#include "engine/ops/codebook.h"
#include "engine/ref/codebook_ref.h"

namespace vkspec {
namespace {

std::vector<uint32_t> download_u32(Context& ctx, const Tensor& t) {
  std::vector<uint32_t> v(static_cast<size_t>(t.numel()));
  ctx.download(t, v.data(), v.size() * 4);
  return v;
}

Tensor upload_u32(Context& ctx, const std::vector<uint32_t>& v, Shape shape, const std::string& name) {
  Tensor t = ctx.tensor(DType::U32, shape, name);
  ctx.upload(t, v.data(), v.size() * 4);
  return t;
}

// Random ids, with every `bad_every`-th one out of range (those rows must come back NaN).
CheckResult check_lookup(Context& ctx, int64_t n, int64_t h, int64_t w, int64_t n_e, int64_t e_dim, int bad_every) {
  const auto cb = random_floats(static_cast<size_t>(n_e * e_dim), 61, -2.0f, 2.0f);
  std::mt19937 rng(62);
  std::vector<uint32_t> ids(static_cast<size_t>(n * h * w));
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = bad_every && i % static_cast<size_t>(bad_every) == 3 ? static_cast<uint32_t>(n_e + i)
                                                                  : static_cast<uint32_t>(rng() % n_e);
  Tensor tcb = upload_floats(ctx, cb, DType::F32, {n_e, e_dim}, "codebook");
  Tensor tid = upload_u32(ctx, ids, {n, h, w}, "ids");
  Tensor out = ctx.tensor(DType::F32, {n, h, w, e_dim}, "latents");
  CommandStream s(ctx);
  ops::codebook_lookup(s, tid, tcb, out);
  s.submit_and_wait();
  auto got = download_floats(ctx, out);
  auto want = ref::codebook_lookup(ids, cb, e_dim);
  // NaN rows must match exactly; the rest compare by normalised error.
  size_t nan_mismatch = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) != std::isnan(got[i])) ++nan_mismatch;
    if (std::isnan(want[i])) got[i] = want[i] = 0.0f;
  }
  const double err = nan_mismatch ? 1.0 : normalised_error(got, want);
  return {err, 1e-6, std::to_string(nan_mismatch) + " NaN mismatches, n_e " + std::to_string(n_e)};
}

// error = fraction of latents whose chosen code is worse than the best by more than f32
// rounding (1e-5 in cosine), or that miss the lowest index of an exact tie.
CheckResult check_quantize(Context& ctx, int64_t count, int64_t n_e, int64_t e_dim,
                           const ops::CodebookQuantizeKernel* kernel) {
  auto cb = random_floats(static_cast<size_t>(n_e * e_dim), 71);
  auto z = random_floats(static_cast<size_t>(count * e_dim), 72, -3.0f, 3.0f);
  const size_t d = static_cast<size_t>(e_dim);
  // Exact ties: code 7 repeated at n_e - 2 and doubled at n_e - 1 (scaling by 2 is exact, so the
  // scores are bit-identical); latent 0 is code 7 halved, latent 1 is zero (all scores 0: id 0).
  for (size_t k = 0; k < d; ++k) {
    cb[(static_cast<size_t>(n_e) - 2) * d + k] = cb[7 * d + k];
    cb[(static_cast<size_t>(n_e) - 1) * d + k] = 2.0f * cb[7 * d + k];
    z[k] = 0.5f * cb[7 * d + k];
    if (count > 1) z[d + k] = 0.0f;
  }
  Tensor tcb = upload_floats(ctx, cb, DType::F32, {n_e, e_dim}, "codebook");
  Tensor tz = upload_floats(ctx, z, DType::F32, {count, e_dim}, "latents");
  Tensor tid = ctx.tensor(DType::U32, {count}, "ids");
  CommandStream s(ctx);
  if (kernel)
    ops::codebook_quantize(s, tz, tcb, tid, *kernel);
  else
    ops::codebook_quantize(s, tz, tcb, tid);
  s.submit_and_wait();
  const auto got = download_u32(ctx, tid);
  size_t bad = 0;
  for (size_t t = 0; t < got.size(); ++t) {
    if (got[t] >= static_cast<uint32_t>(n_e)) {
      ++bad;
      continue;
    }
    const auto sc = ref::codebook_scores(&z[t * d], cb, e_dim);
    const double best = *std::max_element(sc.begin(), sc.end());
    if (sc[got[t]] < best - 1e-5) ++bad;
  }
  if (got[0] != 7) ++bad;
  if (count > 1 && got[1] != 0) ++bad;
  return {static_cast<double>(bad) / static_cast<double>(got.size()), 0.0,
          std::to_string(bad) + " wrong of " + std::to_string(got.size()) + ", ids[0] " + std::to_string(got[0]) +
              " (want 7)"};
}

CheckResult quantize_with(Context& c, int64_t count, int64_t n_e, int64_t e_dim, uint32_t codes, bool subgroup) {
  ops::CodebookQuantizeKernel k;
  k.codes = codes;
  k.subgroup_codes = subgroup;
  return check_quantize(c, count, n_e, e_dim, &k);
}

VKSPEC_OP_CHECK("codebook_lookup", "16x16 n_e 16384 e_dim 8",
                [](Context& c) { return check_lookup(c, 1, 16, 16, 16384, 8, 0); });
VKSPEC_OP_CHECK("codebook_lookup", "2x7x5 n_e 1000 e_dim 13 bad ids",
                [](Context& c) { return check_lookup(c, 2, 7, 5, 1000, 13, 10); });
VKSPEC_OP_CHECK("codebook_lookup", "1x1 n_e 1 e_dim 1", [](Context& c) { return check_lookup(c, 1, 1, 1, 1, 1, 0); });
VKSPEC_OP_CHECK("codebook_quantize", "256 n_e 16384 e_dim 8",
                [](Context& c) { return check_quantize(c, 256, 16384, 8, nullptr); });
VKSPEC_OP_CHECK("codebook_quantize", "1089 n_e 1024 e_dim 8",
                [](Context& c) { return check_quantize(c, 1089, 1024, 8, nullptr); });
VKSPEC_OP_CHECK("codebook_quantize", "37 n_e 301 e_dim 13 own loads",
                [](Context& c) { return quantize_with(c, 37, 301, 13, 3, false); });
VKSPEC_OP_CHECK("codebook_quantize", "50 n_e 77 e_dim 32 shared codes 5",
                [](Context& c) { return quantize_with(c, 50, 77, 32, 5, true); });
VKSPEC_OP_CHECK("codebook_quantize", "1 n_e 9 e_dim 4", [](Context& c) { return check_quantize(c, 1, 9, 4, nullptr); });

}  // namespace
}  // namespace vkspec
