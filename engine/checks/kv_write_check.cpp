#include <random>

#include "engine/checks/op_check.h"
#include "engine/ops/kv_write.h"
#include "engine/ref/attention_ref.h"

namespace vkspec {
namespace {

// k and v come from the fused qkv [B * T, 3 * H * Dh]; the caches start with random contents,
// which must survive outside the written slots (one slot is out of range and must be skipped).
CheckResult check_kv_write(Context& ctx, int64_t B, int64_t T, int64_t S, int64_t H, int64_t Dh, DType dt,
                           bool per_batch_slots) {
  const int64_t width = H * Dh;
  const auto qkv = random_floats(static_cast<size_t>(B * T * 3 * width), 61);
  KvWriteCase c = random_kv_write_case(B, T, S, width, dt, per_batch_slots, 62);
  std::vector<float>&kc = c.k_cache, &vc = c.v_cache;
  const std::vector<uint32_t>& slots = c.slots;
  Tensor tqkv = upload_floats(ctx, qkv, DType::F32, {B * T, 3 * width}, "qkv");
  Tensor tk = upload_floats(ctx, kc, dt, {B, S, H, Dh}, "k cache"),
         tv = upload_floats(ctx, vc, dt, {B, S, H, Dh}, "v cache");
  Tensor ts = ctx.tensor(DType::U32, {static_cast<int64_t>(slots.size())}, "slots");
  ctx.upload(ts, slots.data(), slots.size() * 4);
  CommandStream s(ctx);
  ops::kv_write(s, ops::HeadRows::columns(tqkv, width, H, Dh), ops::HeadRows::columns(tqkv, 2 * width, H, Dh), B, ts,
                tk, tv);
  s.submit_and_wait();

  std::vector<float> ks, vs;
  for (int64_t n = 0; n < B * T; ++n) {
    ks.insert(ks.end(), qkv.begin() + n * 3 * width + width, qkv.begin() + n * 3 * width + 2 * width);
    vs.insert(vs.end(), qkv.begin() + n * 3 * width + 2 * width, qkv.begin() + (n + 1) * 3 * width);
  }
  ref_kv_write_stored(ref::AttentionDims{B, T, S, H, Dh}, dt, ks, vs, slots, kc, vc);
  auto got = [&](const Tensor& t) {
    if (dt == DType::F32) return download_floats(ctx, t);
    std::vector<uint16_t> h(static_cast<size_t>(t.numel()));
    ctx.download(t, h.data(), h.size() * 2);
    std::vector<float> f(h.size());
    for (size_t i = 0; i < h.size(); ++i) f[i] = half_to_float(h[i]);
    return f;
  };
  const double err = std::max(normalised_error(got(tk), kc), normalised_error(got(tv), vc));
  // Exact for f32; for f16 the device's packHalf2x16 rounding may differ from round-to-nearest-even by 1 ulp.
  return {err, dt == DType::F32 ? 0.0 : 1e-4,
          "B=" + std::to_string(B) + " T=" + std::to_string(T) + " S=" + std::to_string(S) + " H=" + std::to_string(H) +
              " Dh=" + std::to_string(Dh) + " " + dtype_name(dt)};
}

VKSPEC_OP_CHECK("kv_write", "B=1 T=1 S=3 H=1 Dh=2 f32",
                [](Context& c) { return check_kv_write(c, 1, 1, 3, 1, 2, DType::F32, false); });
VKSPEC_OP_CHECK("kv_write", "B=2 T=16 S=300 H=12 Dh=64 f16",
                [](Context& c) { return check_kv_write(c, 2, 16, 300, 12, 64, DType::F16, false); });
VKSPEC_OP_CHECK("kv_write", "B=2 T=16 S=40 H=5 Dh=100 f32 per-batch slots",
                [](Context& c) { return check_kv_write(c, 2, 16, 40, 5, 100, DType::F32, true); });
VKSPEC_OP_CHECK("kv_write", "B=1 T=257 S=257 H=3 Dh=32 f16 per-batch slots",
                [](Context& c) { return check_kv_write(c, 1, 257, 257, 3, 32, DType::F16, true); });

}  // namespace
}  // namespace vkspec
