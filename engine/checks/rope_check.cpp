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
