#include <cstring>
#include <random>

#include "engine/checks/op_check.h"
#include "engine/ops/kv_write.h"
#include "engine/ops/matmul.h"
#include "engine/ops/rope.h"

namespace vkspec {
namespace {

// What RoPE and the cache write leave: qkv (q and k rotated) and both caches' words.
struct Out {
  std::vector<float> qkv;
  std::vector<uint32_t> k, v;
};

Out download_outputs(Context& ctx, const Tensor& qkv, const Tensor& k_cache, const Tensor& v_cache) {
  Out o{download_floats(ctx, qkv), std::vector<uint32_t>(static_cast<size_t>(k_cache.bytes() / 4)),
        std::vector<uint32_t>(static_cast<size_t>(v_cache.bytes() / 4))};
  ctx.download(k_cache, o.k.data(), k_cache.bytes());
  ctx.download(v_cache, o.v.data(), v_cache.bytes());
  return o;
}

struct RopeInputs {
  Tensor positions, table, slots;
};

// Random positions for T tokens (the condition token's flag among them), the RoPE table for a
// grid x grid image, and the slots on the device.
RopeInputs upload_rope_inputs(Context& ctx, int64_t T, int64_t Dh, int64_t grid, const std::vector<uint32_t>& slots,
                              uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> pos;
  for (int64_t t = 0; t < T; ++t) {
    const ops::RopePosition r =
        ops::llamagen_position(static_cast<int64_t>(rng() % static_cast<uint64_t>(1 + grid * grid)), 1, grid);
    pos.insert(pos.end(), {r.row, r.col, r.flag});
  }
  RopeInputs in{ctx.tensor(DType::I32, {T, 3}, "positions"), ops::rope_2d_table(ctx, Dh, grid),
                ctx.tensor(DType::U32, {static_cast<int64_t>(slots.size())}, "slots")};
  ctx.upload(in.positions, pos.data(), pos.size() * 4);
  ctx.upload(in.slots, slots.data(), slots.size() * 4);
  return in;
}

// The fused op against rope_2d + rope_2d + kv_write on the same inputs (each checked against the
// CPU reference in its own file): the qkv matrix afterwards and both caches must match bit for
// bit. q, k, v are columns of one qkv [B * T, 3 * H * Dh] as in the GPT; caches start random and
// one slot is out of range (skipped).
CheckResult check_rope_kv_write(Context& ctx, int64_t B, int64_t T, int64_t S, int64_t H, int64_t Dh, DType dt,
                                bool per_batch_slots) {
  const int64_t width = H * Dh, grid = 16;
  const auto qkv = random_floats(static_cast<size_t>(B * T * 3 * width), 71);
  const KvWriteCase c = random_kv_write_case(B, T, S, width, dt, per_batch_slots, 72);
  const std::vector<float>&kc = c.k_cache, &vc = c.v_cache;
  const std::vector<uint32_t>& slots = c.slots;
  const RopeInputs in = upload_rope_inputs(ctx, T, Dh, grid, slots, 75);
  const Tensor &tp = in.positions, &table = in.table, &ts = in.slots;

  auto run = [&](bool fused) {
    Tensor tqkv = upload_floats(ctx, qkv, DType::F32, {B * T, 3 * width}, "qkv");
    Tensor tk = upload_floats(ctx, kc, dt, {B, S, H, Dh}, "k cache"),
           tv = upload_floats(ctx, vc, dt, {B, S, H, Dh}, "v cache");
    const auto q = ops::HeadRows::columns(tqkv, 0, H, Dh), k = ops::HeadRows::columns(tqkv, width, H, Dh),
               v = ops::HeadRows::columns(tqkv, 2 * width, H, Dh);
    CommandStream s(ctx);
    if (fused) {
      ops::rope_2d_kv_write(s, {q, k, v, B, tp, table, ts, tk, tv});
    } else {
      ops::rope_2d(s, q, q, tp, table);
      ops::rope_2d(s, k, k, tp, table);
      ops::kv_write(s, k, v, B, ts, tk, tv);
    }
    s.submit_and_wait();
    return download_outputs(ctx, tqkv, tk, tv);
  };
  const Out a = run(false), b = run(true);
  const double err = std::max(normalised_error(b.qkv, a.qkv), a.k == b.k && a.v == b.v ? 0.0 : 1.0);
  return {err, 0.0,
          "B=" + std::to_string(B) + " T=" + std::to_string(T) + " S=" + std::to_string(S) + " H=" + std::to_string(H) +
              " Dh=" + std::to_string(Dh) + " " + dtype_name(dt) + " against rope_2d + kv_write"};
}

// The q|k|v projection with RoPE and the cache write folded in (ops::MatmulFusion::rope_kv) against
// the same projection followed by rope_2d_kv_write: qkv and both caches bit for bit, on each kernel
// (folded by the broadcast kernel and the plain GEMV, a dispatch of its own elsewhere), with the
// attention norm folded too, as the GPT runs it.
CheckResult check_qkv_fold(Context& ctx, int64_t B, int64_t T, int64_t H, int64_t Dh, DType cache_dt, DType wt,
                           ops::MatmulPath path) {
  const int64_t width = H * Dh, K = 64, M = B * T, S = T + 5, grid = 16;
  std::string what = std::string(ops::matmul_path_name(path)) + " B=" + std::to_string(B) + " T=" + std::to_string(T) +
                     " H=" + std::to_string(H) + " Dh=" + std::to_string(Dh) + " w " + dtype_name(wt) + " cache " +
                     dtype_name(cache_dt);
  if (!ops::matmul_path_supported(ctx, path, M, K, wt)) return CheckResult::skip("kernel not available here, " + what);
  const auto x = random_floats(static_cast<size_t>(M * K), 81),
             w = random_floats(static_cast<size_t>(3 * width * K), 82);
  const auto g = random_floats(static_cast<size_t>(K), 83);
  const KvWriteCase c = random_kv_write_case(B, T, S, width, cache_dt, true, 84);
  const RopeInputs in = upload_rope_inputs(ctx, T, Dh, grid, c.slots, 85);
  const Tensor &tp = in.positions, &table = in.table, &ts = in.slots;
  Tensor tx = upload_floats(ctx, x, DType::F32, {M, K}, "x"), tw = upload_floats(ctx, w, wt, {3 * width, K}, "wqkv");
  Tensor tg = upload_floats(ctx, g, DType::F32, {K}, "norm weight");
  Tensor xs = ctx.tensor(DType::F32, {M, K}, "x scratch");

  bool folded = false;
  auto run = [&](bool fold) {
    Tensor tqkv = ctx.tensor(DType::F32, {M, 3 * width}, "qkv");
    Tensor tk = upload_floats(ctx, c.k_cache, cache_dt, {B, S, H, Dh}, "k cache"),
           tv = upload_floats(ctx, c.v_cache, cache_dt, {B, S, H, Dh}, "v cache");
    ops::MatmulFusion f;
    f.norm_weight = tg;
    f.x_scratch = xs;
    CommandStream s(ctx);
    if (fold) {
      f.rope_kv = {H, Dh, B, tp, table, ts, tk, tv};
      folded = ops::matmul_folds(ctx, M, tw, f, path).rope_kv;
      ops::matmul_fused(s, tx, tw, tqkv, f, path);
    } else {
      ops::matmul_fused(s, tx, tw, tqkv, f, path);
      ops::rope_2d_kv_write(s, {ops::HeadRows::columns(tqkv, 0, H, Dh), ops::HeadRows::columns(tqkv, width, H, Dh),
                                ops::HeadRows::columns(tqkv, 2 * width, H, Dh), B, tp, table, ts, tk, tv});
    }
    s.submit_and_wait();
    return download_outputs(ctx, tqkv, tk, tv);
  };
  const Out a = run(false), b = run(true);
  const bool same = std::memcmp(a.qkv.data(), b.qkv.data(), a.qkv.size() * 4) == 0 && a.k == b.k && a.v == b.v;
  return {same ? 0.0 : 1.0, 0.0, std::string(folded ? "folded " : "own dispatch ") + what};
}

struct RegisterQkvFoldChecks {
  RegisterQkvFoldChecks() {
    using P = ops::MatmulPath;
    struct Case {
      int64_t B, T, H, Dh;
    };
    // Decoding (a CFG pair, one token; 8 rows, the most that fold), a window's rows, an odd head
    // count with head_dim not a multiple of 4 (RoPE's quarters), one head of 8 over 40 rows. Past 8
    // rows both runs record the same dispatches (the fold is declined), so rows past the plain
    // GEMV's 64 (this case had 2 x 40) added only a 64-row GEMV pipeline per weight type, 15-21 s
    // of lavapipe's CPU each at subgroup 4; 40 rows take the norm checks' pipelines, and matmul's
    // 130-row case checks the GEMV's split against the reference.
    for (const Case& k :
         std::initializer_list<Case>{{2, 1, 4, 16}, {4, 2, 2, 16}, {2, 17, 2, 32}, {1, 3, 3, 12}, {2, 20, 1, 8}})
      for (P path : {P::Auto, P::Broadcast, P::Gemv, P::Gemm, P::CoopMat})
        for (DType cache : {DType::F16, DType::F32}) {
          const DType wt = cache;  // both weight types, each with one cache type
          RegisterOpCheck("rope_2d_kv_write",
                          std::string("q|k|v fold ") + ops::matmul_path_name(path) + " B=" + std::to_string(k.B) +
                              " T=" + std::to_string(k.T) + " H=" + std::to_string(k.H) +
                              " Dh=" + std::to_string(k.Dh) + " " + dtype_name(cache),
                          [=](Context& c) { return check_qkv_fold(c, k.B, k.T, k.H, k.Dh, cache, wt, path); });
        }
  }
} register_qkv_fold_checks;

VKSPEC_OP_CHECK("rope_2d_kv_write", "B=1 T=1 S=3 H=1 Dh=4 f32",
                [](Context& c) { return check_rope_kv_write(c, 1, 1, 3, 1, 4, DType::F32, false); });
VKSPEC_OP_CHECK("rope_2d_kv_write", "B=2 T=17 S=300 H=4 Dh=64 f16",
                [](Context& c) { return check_rope_kv_write(c, 2, 17, 300, 4, 64, DType::F16, false); });
VKSPEC_OP_CHECK("rope_2d_kv_write", "B=2 T=16 S=40 H=5 Dh=100 f32 per-batch slots",
                [](Context& c) { return check_rope_kv_write(c, 2, 16, 40, 5, 100, DType::F32, true); });

}  // namespace
}  // namespace vkspec
