#include <cmath>
#include <random>

#include "engine/checks/op_check.h"
#include "engine/ops/rope.h"
#include "engine/ref/rope_ref.h"

namespace vkspec {
namespace {

// Positions for sequence indices [first, first + count) in LlamaGen's layout, plus random
// out-of-order ones when first < 0 (speculative / ZipAR batches are not contiguous).
std::vector<int32_t> make_positions(int64_t first, int64_t count, int64_t cls, int64_t grid) {
  std::mt19937_64 rng(41);
  std::vector<int32_t> p;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t index =
        first >= 0 ? first + i : static_cast<int64_t>(rng() % static_cast<uint64_t>(cls + grid * grid));
    const ops::RopePosition r = ops::llamagen_position(index, cls, grid);
    p.insert(p.end(), {r.row, r.col, r.flag});
  }
  return p;
}

Tensor upload_positions(Context& ctx, const std::vector<int32_t>& p) {
  Tensor t = ctx.tensor(DType::I32, {static_cast<int64_t>(p.size() / 3), 3}, "positions");
  ctx.upload(t, p.data(), p.size() * 4);
  return t;
}

// Packed [T, H, Dh] in, separate packed out.
CheckResult check_packed(Context& ctx, int64_t tokens, int64_t heads, int64_t head_dim, int64_t grid) {
  const auto x = random_floats(static_cast<size_t>(tokens * heads * head_dim), 42);
  const auto pos = make_positions(-1, tokens, 1, grid);
  const auto table = ops::rope_2d_cos_sin(head_dim, grid);
  Tensor tx = upload_floats(ctx, x, DType::F32, {tokens, heads * head_dim}, "x");
  Tensor ty = ctx.tensor(DType::F32, {tokens, heads * head_dim}, "y");
  Tensor tp = upload_positions(ctx, pos), tt = ops::rope_2d_table(ctx, head_dim, grid);
  CommandStream s(ctx);
  ops::rope_2d(s, ops::HeadRows::packed(tx, tokens, heads, head_dim),
               ops::HeadRows::packed(ty, tokens, heads, head_dim), tp, tt);
  s.submit_and_wait();
  return {normalised_error(download_floats(ctx, ty), ref::rope_2d(x, tokens, heads, head_dim, pos, table)), 1e-6,
          "T=" + std::to_string(tokens) + " H=" + std::to_string(heads) + " Dh=" + std::to_string(head_dim)};
}

// In place on the q and k columns of a fused qkv [B * T, 3 * dim]; v columns must stay untouched.
// Positions have T rows and serve both batch rows.
CheckResult check_fused_qkv(Context& ctx, int64_t batch, int64_t first, int64_t tokens, int64_t n_head,
                            int64_t head_dim, int64_t grid) {
  const int64_t dim = n_head * head_dim, rows = batch * tokens;
  const auto qkv = random_floats(static_cast<size_t>(rows * 3 * dim), 43);
  const auto pos = make_positions(first, tokens, 1, grid);
  const auto table = ops::rope_2d_cos_sin(head_dim, grid);
  Tensor t = upload_floats(ctx, qkv, DType::F32, {rows, 3 * dim}, "qkv");
  Tensor tp = upload_positions(ctx, pos), tt = ops::rope_2d_table(ctx, head_dim, grid);
  CommandStream s(ctx);
  const auto qk = ops::HeadRows::columns(t, 0, 2 * n_head, head_dim);
  ops::rope_2d(s, qk, qk, tp, tt);
  s.submit_and_wait();
  std::vector<float> x;  // q|k of every row, packed as [rows, 2 * n_head, head_dim]
  for (int64_t r = 0; r < rows; ++r) x.insert(x.end(), qkv.begin() + r * 3 * dim, qkv.begin() + r * 3 * dim + 2 * dim);
  const auto y = ref::rope_2d(x, rows, 2 * n_head, head_dim, pos, table);
  std::vector<float> want = qkv;
  for (int64_t r = 0; r < rows; ++r)
    std::copy(y.begin() + r * 2 * dim, y.begin() + (r + 1) * 2 * dim, want.begin() + r * 3 * dim);
  return {normalised_error(download_floats(ctx, t), want), 1e-6,
          "B=" + std::to_string(batch) + " T=" + std::to_string(tokens) + " H=" + std::to_string(n_head) +
              " Dh=" + std::to_string(head_dim) + " fused qkv in place"};
}

// The f32 table against LlamaGen's formula evaluated in double: differences come only from
// LlamaGen's own float32 frequencies and angles (a few ulp of angles up to grid radians).
CheckResult check_table(Context&, int64_t head_dim, int64_t grid) {
  const auto table = ops::rope_2d_cos_sin(head_dim, grid);
  std::vector<float> want(table.size());
  for (int64_t r = 0; r < grid; ++r)
    for (int64_t j = 0; j < head_dim / 4; ++j) {
      const double a = ref::rope_2d_angle(head_dim, r, j, 10000.0);
      want[static_cast<size_t>((r * head_dim / 4 + j) * 2)] = static_cast<float>(std::cos(a));
      want[static_cast<size_t>((r * head_dim / 4 + j) * 2 + 1)] = static_cast<float>(std::sin(a));
    }
  return {normalised_error(table, want), 1e-6,
          "table Dh=" + std::to_string(head_dim) + " grid=" + std::to_string(grid)};
}

// The 1D table through the 2D kernel against Hugging Face's LLaMA RoPE computed in double on the
// rotate-half layout: x is de-interleaved per head (pair i = (x[2i], x[2i + 1]) becomes (i,
// i + Dh / 2)), rotated by position * base^(-2i / Dh), and interleaved back.
std::vector<float> hf_rope_interleaved(const std::vector<float>& x, int64_t tokens, int64_t heads, int64_t hd,
                                       const std::vector<int64_t>& index, double base) {
  std::vector<float> y(x.size());
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < hd / 2; ++i) {
        const size_t at = static_cast<size_t>((t * heads + h) * hd + 2 * i);
        // transformers' inv_freq and angle are float32; cos and sin in double.
        const float expo = static_cast<float>(2 * i) / static_cast<float>(hd);
        const float freq = 1.0f / static_cast<float>(std::pow(base, static_cast<double>(expo)));
        const double a = static_cast<float>(index[static_cast<size_t>(t)]) * freq;
        const double lo = x[at], hi = x[at + 1];  // rotate-half's x[i] and x[i + hd / 2]
        y[at] = static_cast<float>(lo * std::cos(a) - hi * std::sin(a));
        y[at + 1] = static_cast<float>(hi * std::cos(a) + lo * std::sin(a));
      }
  return y;
}

CheckResult check_1d(Context& ctx, int64_t tokens, int64_t heads, int64_t head_dim, int64_t n_pos) {
  const auto x = random_floats(static_cast<size_t>(tokens * heads * head_dim), 44);
  std::mt19937_64 rng(45);
  std::vector<int64_t> index;
  std::vector<int32_t> pos;
  for (int64_t t = 0; t < tokens; ++t) {
    index.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(n_pos)));
    const ops::RopePosition r = ops::sequence_position(index.back(), n_pos);
    pos.insert(pos.end(), {r.row, r.col, r.flag});
  }
  Tensor tx = upload_floats(ctx, x, DType::F32, {tokens, heads * head_dim}, "x");
  Tensor ty = ctx.tensor(DType::F32, {tokens, heads * head_dim}, "y");
  Tensor tp = upload_positions(ctx, pos), tt = ops::rope_1d_table(ctx, head_dim, n_pos);
  CommandStream s(ctx);
  ops::rope_2d(s, ops::HeadRows::packed(tx, tokens, heads, head_dim),
               ops::HeadRows::packed(ty, tokens, heads, head_dim), tp, tt);
  s.submit_and_wait();
  return {normalised_error(download_floats(ctx, ty), hf_rope_interleaved(x, tokens, heads, head_dim, index, 10000.0)),
          1e-6, "T=" + std::to_string(tokens) + " Dh=" + std::to_string(head_dim) + " n_pos=" + std::to_string(n_pos)};
}

VKSPEC_OP_CHECK("rope_2d", "1d T=40 H=3 Dh=64 n_pos=700", [](Context& c) { return check_1d(c, 40, 3, 64, 700); });
VKSPEC_OP_CHECK("rope_2d", "1d T=9 H=2 Dh=128 n_pos=2000", [](Context& c) { return check_1d(c, 9, 2, 128, 2000); });
VKSPEC_OP_CHECK("rope_2d", "T=1 H=1 Dh=4 grid=2", [](Context& c) { return check_packed(c, 1, 1, 4, 2); });
VKSPEC_OP_CHECK("rope_2d", "T=37 H=3 Dh=64 grid=16", [](Context& c) { return check_packed(c, 37, 3, 64, 16); });
VKSPEC_OP_CHECK("rope_2d", "T=300 H=5 Dh=32 grid=32", [](Context& c) { return check_packed(c, 300, 5, 32, 32); });
VKSPEC_OP_CHECK("rope_2d", "prefill B=2 T=257 H=12 Dh=64 qkv",
                [](Context& c) { return check_fused_qkv(c, 2, 0, 257, 12, 64, 16); });
VKSPEC_OP_CHECK("rope_2d", "window B=2 T=16 H=20 Dh=64 qkv",
                [](Context& c) { return check_fused_qkv(c, 2, 200, 16, 20, 64, 16); });
VKSPEC_OP_CHECK("rope_2d", "decode B=1 T=1 H=7 Dh=128 qkv",
                [](Context& c) { return check_fused_qkv(c, 1, 1000, 1, 7, 128, 32); });
VKSPEC_OP_CHECK("rope_2d", "table Dh=64 grid=32", [](Context& c) { return check_table(c, 64, 32); });
VKSPEC_OP_CHECK("rope_2d", "table Dh=128 grid=48", [](Context& c) { return check_table(c, 128, 48); });

}  // namespace
}  // namespace vkspec
