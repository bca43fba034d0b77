#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "common/error.h"
#include "engine/checks/op_check.h"
#include "engine/ops/attention.h"
#include "engine/ops/attention_mask.h"
#include "engine/ref/attention_ref.h"

namespace vkspec {
namespace {

enum class MaskKind {
  Causal,  // query t sees [0, kv_len - T + t]: decode and prefill
  Tree,    // committed prefix + a tree of candidates in the last T slots (speculative window)
  ZipAR,   // a dense prefix of random length, then a random subset (parallel rows)
  Random,  // arbitrary islands; some queries see nothing
  // PJD's Jacobi windows on a staircase of rows (decoding/pjd_schedule.h): each query sees the
  // committed slots below it and its own window's earlier slots, not the other windows' drafts
  // (nor the stale drafts right of each row's frontier); the bottom window's first query is a
  // placeholder that sees only itself.
  RowWindows,
};

struct Case {
  int64_t B = 1, T = 1, S = 1, kv_len = 1, H = 1, Dh = 64;
  DType cache = DType::F32;
  MaskKind mask = MaskKind::Causal;
  bool per_batch_mask = false;  // [B, T] metadata instead of [T]
  bool fused_q = false;         // q read from the first columns of a [B * T, 3 * H * Dh] matrix
  int64_t workspace = -1;       // bytes; -1: attention_workspace_bytes
  ops::AttentionOptions opt;
};

// RowWindows on a 16-wide grid behind one condition slot: the T queries split into windows of 1..8
// on consecutive rows, the top one ending its row, each lower one ending at the frontier of the row
// above (T <= 16, so the lowest frontier is >= 0), the bottom row as low as kv_len allows.
void row_windows(const Case& c, std::mt19937_64& rng, std::vector<uint8_t>& vis) {
  constexpr int64_t W = 16;
  if (c.T > W || c.per_batch_mask) throw Error("attention check: row windows take T <= 16 and one mask");
  std::vector<int64_t> sizes;
  for (int64_t left = c.T; left > 0;) {
    sizes.push_back(std::min<int64_t>(left, 1 + static_cast<int64_t>(rng() % 8)));
    left -= sizes.back();
  }
  const int64_t K = static_cast<int64_t>(sizes.size()), top = (c.kv_len - 2) / W - K;
  if (top < 0) throw Error("attention check: kv_len too small for the row windows");
  std::vector<int64_t> frontier(static_cast<size_t>(K));  // committed columns of each window's row
  for (int64_t k = 0; k < K; ++k)
    frontier[static_cast<size_t>(k)] = (k ? frontier[static_cast<size_t>(k - 1)] : W) - sizes[static_cast<size_t>(k)];
  auto committed = [&](int64_t slot) {
    const int64_t n = slot - 1, row = n / W;
    return slot == 0 || row < top || (row < top + K && n % W < frontier[static_cast<size_t>(row - top)]);
  };
  int64_t t = 0;
  for (int64_t k = 0; k < K; ++k) {
    const int64_t anchor = 1 + (top + k) * W + frontier[static_cast<size_t>(k)] - 1;
    for (int64_t i = 0; i < sizes[static_cast<size_t>(k)]; ++i, ++t) {
      uint8_t* v = &vis[static_cast<size_t>(t * c.S)];
      const bool placeholder = i == 0 && frontier[static_cast<size_t>(k)] == 0;
      for (int64_t s = 0; s < anchor && !placeholder; ++s) v[s] = committed(s);
      for (int64_t s = anchor; s <= anchor + i; ++s) v[s] = 1;
    }
  }
}

std::vector<uint8_t> make_visible(const Case& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t rows = c.per_batch_mask ? c.B * c.T : c.T, committed = c.kv_len - c.T;
  std::vector<uint8_t> vis(static_cast<size_t>(rows * c.S), 0);
  for (int64_t r = 0; r < rows; ++r) {
    uint8_t* v = &vis[static_cast<size_t>(r * c.S)];
    const int64_t t = r % c.T;
    switch (c.mask) {
      case MaskKind::Causal: std::fill_n(v, committed + t + 1, 1); break;
      case MaskKind::Tree: {
        std::fill_n(v, committed, 1);
        // Ancestors of candidate t: a random parent chain inside the window.
        for (int64_t a = t; a >= 0; a = a == 0 ? -1 : static_cast<int64_t>(rng() % static_cast<uint64_t>(a + 1)) - 1)
          v[committed + a] = 1;
        break;
      }
      case MaskKind::ZipAR: {
        const int64_t dense = static_cast<int64_t>(rng() % static_cast<uint64_t>(c.kv_len / 2 + 1));
        std::fill_n(v, dense, 1);
        for (int64_t s = dense; s < c.kv_len; ++s) v[s] = rng() % 10 < 8;
        break;
      }
      case MaskKind::Random:
        if (t % 7 == 3) break;  // sees nothing: output must be zeros
        for (int64_t s = 0; s < c.kv_len; ++s) v[s] = rng() % 10 < 3;
        break;
      case MaskKind::RowWindows: break;  // all rows at once, below
    }
  }
  if (c.mask == MaskKind::RowWindows) row_windows(c, rng, vis);
  return vis;
}

std::string describe(const Case& c) {
  static const char* kinds[] = {"causal", "tree", "zipar", "random", "pjd row windows"};
  return "B=" + std::to_string(c.B) + " T=" + std::to_string(c.T) + " S=" + std::to_string(c.S) +
         " kv=" + std::to_string(c.kv_len) + " H=" + std::to_string(c.H) + " Dh=" + std::to_string(c.Dh) + " " +
         dtype_name(c.cache) + " " + kinds[static_cast<int>(c.mask)] +
         (c.opt.loads == ops::AttentionLoads::Narrow  ? " narrow"
          : c.opt.loads == ops::AttentionLoads::Wide  ? " wide"
          : c.opt.loads == ops::AttentionLoads::Texel ? " texel"
                                                      : "") +
         (c.opt.splits ? " splits " + std::to_string(c.opt.splits) : "") +
         (c.opt.queries_per_pass ? " qg " + std::to_string(c.opt.queries_per_pass) : "");
}

// Caches hold NaN in every slot the batch row's queries cannot see, so a leak shows as NaN.
CheckResult check_attention(Context& ctx, const Case& c) {
  if (!ops::attention_loads_available(ctx.caps(), c.opt.loads))
    return CheckResult::skip("these cache loads need a feature the device lacks (shaderInt64 or texel buffers)");
  const int64_t width = c.H * c.Dh, q_cols = c.fused_q ? 3 * width : width;
  auto qsrc = random_floats(static_cast<size_t>(c.B * c.T * q_cols), 51, -3.0f, 3.0f);
  auto k = random_floats(static_cast<size_t>(c.B * c.S * width), 52);
  auto v = random_floats(static_cast<size_t>(c.B * c.S * width), 53);
  if (c.cache == DType::F16) {
    k = round_to_half(k);
    v = round_to_half(v);
  }
  const auto vis = make_visible(c, 54);
  const int64_t mask_rows = c.per_batch_mask ? c.B * c.T : c.T;
  std::vector<float> kn = k, vn = v;
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t s = 0; s < c.S; ++s) {
      bool seen = false;
      for (int64_t r = 0; r < c.T; ++r) {
        const int64_t row = c.per_batch_mask ? b * c.T + r : r;
        seen = seen || (s < c.kv_len && vis[static_cast<size_t>(row * c.S + s)]);
      }
      if (!seen)
        for (int64_t e = 0; e < width; ++e) {
          kn[static_cast<size_t>((b * c.S + s) * width + e)] = std::numeric_limits<float>::quiet_NaN();
          vn[static_cast<size_t>((b * c.S + s) * width + e)] = std::numeric_limits<float>::quiet_NaN();
        }
    }
  ops::AttentionMaskBuilder mb(mask_rows, c.S);
  for (int64_t r = 0; r < mask_rows; ++r)
    for (int64_t s = 0; s < c.S; ++s)
      if (vis[static_cast<size_t>(r * c.S + s)]) mb.see(r, s);
  const ops::AttentionMaskTensors mask = ops::upload_attention_mask(ctx, mb.pack());

  Tensor tq = upload_floats(ctx, qsrc, DType::F32, {c.B * c.T, q_cols}, "q");
  Tensor tk = upload_floats(ctx, kn, c.cache, {c.B, c.S, c.H, c.Dh}, "k cache");
  Tensor tv = upload_floats(ctx, vn, c.cache, {c.B, c.S, c.H, c.Dh}, "v cache");
  Tensor out = ctx.tensor(DType::F32, {c.B * c.T, width}, "out");
  const ops::AttentionShape shape{c.B, c.T, c.H, c.Dh, c.kv_len};
  const uint64_t ws_bytes =
      c.workspace >= 0 ? static_cast<uint64_t>(c.workspace) : ops::attention_workspace_bytes(ctx, shape, c.opt);
  Tensor ws = ops::attention_workspace(ctx, ws_bytes, "workspace");
  CommandStream s(ctx);
  const auto q = c.fused_q ? ops::HeadRows::columns(tq, 0, c.H, c.Dh) : ops::HeadRows::packed(tq, c.B * c.T, c.H, c.Dh);
  // Twice on one workspace, out poisoned between: the second call's splits find the counters the
  // first left (zero, or no split would know it is the last and out would keep its NaNs).
  ops::Attention a;
  a.q = q;
  a.batch = c.B;
  a.k_cache = tk;
  a.v_cache = tv;
  a.kv_len = c.kv_len;
  a.mask = mask.view();
  a.out = out;
  if (ws.valid()) a.workspace = ws.view();
  for (int call = 0; call < (ws.valid() ? 2 : 1); ++call) {
    if (call) s.fill(out.view(), 0x7fc00000u);
    ops::attention(s, a, c.opt);
  }
  s.submit_and_wait();

  std::vector<float> qp;  // packed [B, T, H, Dh]
  for (int64_t n = 0; n < c.B * c.T; ++n)
    qp.insert(qp.end(), qsrc.begin() + n * q_cols, qsrc.begin() + n * q_cols + width);
  const auto want =
      ref::attention({c.B, c.T, c.S, c.H, c.Dh}, qp, kn, vn, vis, c.kv_len, 1.0f / std::sqrt(static_cast<float>(c.Dh)));
  // The output averages up to kv_len values of both signs, so f32 accumulation error relative to
  // it grows like sqrt(kv_len): 1e-6 up to 256 visible slots, more beyond.
  const double tol = 1e-6 * std::max(1.0, std::sqrt(static_cast<double>(c.kv_len) / 256.0));
  return {normalised_error(download_floats(ctx, out), want), tol,
          describe(c) + " workspace " + std::to_string(ws_bytes) + " B"};
}

void reg(const std::string& name, const Case& c) {
  RegisterOpCheck("attention", name, [c](Context& ctx) { return check_attention(ctx, c); });
}

Case make(int64_t B, int64_t T, int64_t S, int64_t kv, int64_t H, int64_t Dh, DType dt, MaskKind m) {
  Case c;
  c.B = B, c.T = T, c.S = S, c.kv_len = kv, c.H = H, c.Dh = Dh, c.cache = dt, c.mask = m;
  return c;
}

const bool registered = [] {
  const DType F32 = DType::F32, F16 = DType::F16;
  reg("decode B=2 T=1 kv=257 H=12 Dh=64 f32", make(2, 1, 300, 257, 12, 64, F32, MaskKind::Causal));
  {
    Case c = make(1, 1, 1025, 1000, 2, 64, F16, MaskKind::Causal);
    c.opt.splits = 7;
    reg("decode 7 splits B=1 T=1 kv=1000 H=2 Dh=64 f16", c);
    c = make(2, 1, 257, 257, 2, 32, F32, MaskKind::Causal);
    c.opt.splits = 8;
    c.workspace = 2 * 2 * 1 * 3 * (32 + 2) * 4 * 8 / 7 + 4;  // room for 3 splits' partials and counters only
    reg("decode small workspace B=2 T=1 H=2 Dh=32 f32", c);
    c = make(2, 16, 300, 273, 3, 64, F16, MaskKind::Tree);
    c.opt.splits = 5;
    reg("window tree 5 splits B=2 T=16 kv=273 H=3 Dh=64 f16", c);
    c = make(1, 6, 200, 180, 2, 64, F32, MaskKind::Random);  // some splits see nothing for some queries
    c.opt.splits = 9;
    reg("random 9 splits B=1 T=6 kv=180 H=2 Dh=64 f32", c);
    // Chunks cut for the cache's slots (batched images): the last ones lie past kv_len, empty.
    c = make(2, 1, 300, 40, 2, 64, F16, MaskKind::Causal);
    c.opt.splits = 6;
    c.opt.split_slots = 300;
    reg("decode chunks past kv 6 splits of 300 slots B=2 T=1 kv=40 H=2 Dh=64 f16", c);
    // Fewer queries per pass than the plan would take (a window of 17 leaves a partial group).
    for (uint32_t g : {1u, 2u, 4u}) {
      c = make(2, 17, 160, 145, 4, 64, F16, MaskKind::Tree);
      c.opt.queries_per_pass = g;
      c.opt.splits = g == 2 ? 18 : 0;
      reg("window tree qg " + std::to_string(g) + (g == 2 ? " 18 splits" : "") + " B=2 T=17 kv=145 H=4 Dh=64 f16", c);
    }
  }
  reg("decode B=2 T=1 kv=1025 H=32 Dh=100 f16", make(2, 1, 1025, 1025, 32, 100, F16, MaskKind::Causal));
  reg("decode B=1 T=2 kv=77 H=3 Dh=128 f32", make(1, 2, 80, 77, 3, 128, F32, MaskKind::Causal));
  {
    Case c = make(2, 16, 320, 273, 8, 64, F16, MaskKind::Tree);
    c.fused_q = true;
    reg("window tree B=2 T=16 kv=273 H=8 Dh=64 f16 qkv", c);
  }
  {
    Case c = make(2, 16, 300, 200, 4, 32, F32, MaskKind::ZipAR);
    c.per_batch_mask = true;
    reg("window zipar B=2 T=16 H=4 Dh=32 f32 per-batch", c);
  }
  reg("prefill causal B=2 T=257 H=4 Dh=64 f32", make(2, 257, 257, 257, 4, 64, F32, MaskKind::Causal));
  reg("prefill causal B=1 T=257 H=3 Dh=32 f16", make(1, 257, 260, 257, 3, 32, F16, MaskKind::Causal));
  reg("random B=2 T=40 kv=190 H=3 Dh=64 f32", make(2, 40, 200, 190, 3, 64, F32, MaskKind::Random));
  {
    Case c = make(2, 5, 150, 150, 2, 64, F16, MaskKind::Random);
    c.per_batch_mask = true;
    reg("random B=2 T=5 kv=150 H=2 Dh=64 f16 per-batch", c);
  }
  reg("zipar B=1 T=31 kv=550 H=5 Dh=64 f16", make(1, 31, 600, 550, 5, 64, F16, MaskKind::ZipAR));
  reg("tree B=1 T=9 kv=40 H=1 Dh=100 f32", make(1, 9, 64, 40, 1, 100, F32, MaskKind::Tree));
  // PJD: several rows' windows in one forward at the shipped model's shape (16x16 grid; a step's
  // windows hold at most W = 16 queries, plus at most one placeholder repair).
  reg("pjd row windows B=2 T=16 kv=257 H=4 Dh=64 f16", make(2, 16, 257, 257, 4, 64, F16, MaskKind::RowWindows));
  reg("pjd row windows B=2 T=11 kv=200 H=2 Dh=64 f32", make(2, 11, 257, 200, 2, 64, F32, MaskKind::RowWindows));
  // 32-bit cache loads, the path for devices without shaderInt64 (and f16 with head_dim % 4 != 0).
  for (DType dt : {F16, F32}) {
    Case c = make(2, 16, 300, 273, 4, 64, dt, MaskKind::Tree);
    c.opt.loads = ops::AttentionLoads::Narrow;
    reg(std::string("window tree B=2 T=16 kv=273 H=4 Dh=64 ") + dtype_name(dt) + " narrow", c);
    c = make(2, 1, 300, 257, 3, 64, dt, MaskKind::Causal);
    c.opt.loads = ops::AttentionLoads::Narrow;
    reg(std::string("decode B=2 T=1 kv=257 H=3 Dh=64 ") + dtype_name(dt) + " narrow", c);
  }
  reg("random B=1 T=3 kv=100 H=2 Dh=34 f16", make(1, 3, 100, 100, 2, 34, F16, MaskKind::Random));
  // f16 caches both ways whatever Auto picks on this device: 64-bit storage loads (GPUs) and texel
  // fetches (CPU drivers).
  for (ops::AttentionLoads loads : {ops::AttentionLoads::Wide, ops::AttentionLoads::Texel}) {
    const char* name = loads == ops::AttentionLoads::Wide ? " wide" : " texel";
    Case c = make(2, 16, 300, 273, 4, 64, F16, MaskKind::Tree);
    c.opt.loads = loads;
    reg(std::string("window tree B=2 T=16 kv=273 H=4 Dh=64 f16") + name, c);
    c = make(2, 1, 300, 257, 3, 64, F16, MaskKind::Causal);
    c.opt.loads = loads;
    reg(std::string("decode B=2 T=1 kv=257 H=3 Dh=64 f16") + name, c);
    c = make(1, 31, 600, 550, 5, 36, F16, MaskKind::ZipAR);
    c.opt.loads = loads;
    reg(std::string("zipar B=1 T=31 kv=550 H=5 Dh=36 f16") + name, c);
  }
  return true;
}();

}  // namespace
}  // namespace vkspec
