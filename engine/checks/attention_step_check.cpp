// One attention block of a speculative step the way the model records it: RoPE in place on the
// q and k columns of the fused wqkv output, kv_write of k and v into the cache slots of the new
// tokens, then attention reading q from the same matrix. Catches layout disagreements between
// the ops that the per-op checks cannot.
#include <algorithm>
#include <cmath>

#include "engine/checks/op_check.h"
#include "engine/ops/attention.h"
#include "engine/ops/attention_mask.h"
#include "engine/ops/kv_write.h"
#include "engine/ops/rope.h"
#include "engine/ref/attention_ref.h"
#include "engine/ref/rope_ref.h"

namespace vkspec {
namespace {

// B = 2 (CFG rows), T new tokens at sequence positions [committed, committed + T) with LlamaGen's
// layout (1 class token, grid 16); the cache already holds `committed` slots.
CheckResult check_step(Context& ctx, int64_t T, int64_t committed, int64_t H, int64_t Dh, DType cache_dt) {
  const int64_t B = 2, dim = H * Dh, S = committed + T + 5, kv_len = committed + T, grid = 16;
  const auto qkv = random_floats(static_cast<size_t>(B * T * 3 * dim), 81, -2.0f, 2.0f);
  auto kc = random_floats(static_cast<size_t>(B * S * dim), 82), vc = random_floats(kc.size(), 83);
  if (cache_dt == DType::F16) {
    kc = round_to_half(kc);
    vc = round_to_half(vc);
  }
  std::vector<int32_t> pos;
  std::vector<uint32_t> slots;
  ops::AttentionMaskBuilder mb(T, S);
  for (int64_t t = 0; t < T; ++t) {
    const ops::RopePosition rp = ops::llamagen_position(committed + t, 1, grid);
    pos.insert(pos.end(), {rp.row, rp.col, rp.flag});
    slots.push_back(static_cast<uint32_t>(committed + t));
    mb.see_prefix(t, committed + t + 1);
  }
  Tensor tqkv = upload_floats(ctx, qkv, DType::F32, {B * T, 3 * dim}, "qkv");
  Tensor tk = upload_floats(ctx, kc, cache_dt, {B, S, H, Dh}, "k cache");
  Tensor tv = upload_floats(ctx, vc, cache_dt, {B, S, H, Dh}, "v cache");
  Tensor tpos = ctx.tensor(DType::I32, {T, 3}, "positions"), tslots = ctx.tensor(DType::U32, {T}, "slots");
  ctx.upload(tpos, pos.data(), pos.size() * 4);
  ctx.upload(tslots, slots.data(), slots.size() * 4);
  Tensor table = ops::rope_2d_table(ctx, Dh, grid);
  const ops::AttentionMaskTensors mask = ops::upload_attention_mask(ctx, mb.pack());
  Tensor out = ctx.tensor(DType::F32, {B * T, dim}, "attn out");
  const uint64_t ws_bytes = ops::attention_workspace_bytes(ctx, {B, T, H, Dh, kv_len});
  Tensor ws = ops::attention_workspace(ctx, ws_bytes, "workspace");

  CommandStream s(ctx);
  const auto qk = ops::HeadRows::columns(tqkv, 0, 2 * H, Dh);
  ops::rope_2d(s, qk, qk, tpos, table);
  ops::kv_write(s, ops::HeadRows::columns(tqkv, dim, H, Dh), ops::HeadRows::columns(tqkv, 2 * dim, H, Dh), B, tslots,
                tk, tv);
  ops::Attention a;
  a.q = ops::HeadRows::columns(tqkv, 0, H, Dh);
  a.batch = B;
  a.k_cache = tk;
  a.v_cache = tv;
  a.kv_len = kv_len;
  a.mask = mask.view();
  a.out = out;
  if (ws.valid()) a.workspace = ws.view();
  ops::attention(s, a);
  s.submit_and_wait();

  std::vector<float> q, k, v;  // [B * T, H, Dh] each
  for (int64_t n = 0; n < B * T; ++n) {
    const auto row = qkv.begin() + n * 3 * dim;
    q.insert(q.end(), row, row + dim);
    k.insert(k.end(), row + dim, row + 2 * dim);
    v.insert(v.end(), row + 2 * dim, row + 3 * dim);
  }
  const auto tab = ops::rope_2d_cos_sin(Dh, grid);
  q = ref::rope_2d(q, B * T, H, Dh, pos, tab);
  k = ref::rope_2d(k, B * T, H, Dh, pos, tab);
  const ref::AttentionDims d{B, T, S, H, Dh};
  ref_kv_write_stored(d, cache_dt, k, v, slots, kc, vc);
  std::vector<uint8_t> vis(static_cast<size_t>(T * S), 0);
  for (int64_t t = 0; t < T; ++t) std::fill_n(vis.begin() + t * S, committed + t + 1, uint8_t{1});
  const auto want = ref::attention(d, q, kc, vc, vis, kv_len, 1.0f / std::sqrt(static_cast<float>(Dh)));
  // f16: the device's packHalf2x16 may round differently from nearest-even by one ulp.
  return {normalised_error(download_floats(ctx, out), want), cache_dt == DType::F32 ? 1e-6 : 1e-4,
          "T=" + std::to_string(T) + " committed=" + std::to_string(committed) + " H=" + std::to_string(H) +
              " Dh=" + std::to_string(Dh) + " " + dtype_name(cache_dt)};
}

VKSPEC_OP_CHECK("attention", "fused step decode T=1 f16",
                [](Context& c) { return check_step(c, 1, 137, 4, 64, DType::F16); });
VKSPEC_OP_CHECK("attention", "fused step window T=16 f32",
                [](Context& c) { return check_step(c, 16, 200, 3, 64, DType::F32); });
VKSPEC_OP_CHECK("attention", "fused step prefill T=257 f32",
                [](Context& c) { return check_step(c, 257, 0, 2, 32, DType::F32); });

}  // namespace
}  // namespace vkspec
