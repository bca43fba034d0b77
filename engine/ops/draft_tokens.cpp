#include "engine/ops/draft_tokens.h"

#include <algorithm>

#include "engine/ops/dispatch_util.h"
#include "engine/ops/row_window.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {
namespace {

void require_index(const char* op, const char* what, const TensorView& v, int64_t n) {
  require(v.buffer && (v.dtype == DType::U32 || v.dtype == DType::I32) && v.numel() == n, op, [&] {
    return std::string(what) + " must be u32/i32 with " + std::to_string(n) + " elements, got " + v.shape.str();
  });
}

}  // namespace

void top_tokens(CommandStream& s, const TensorView& q, uint32_t k, const TensorView& tokens, const TensorView& values) {
  const char* op = "top_tokens";
  require(q.dtype == DType::F32 && q.shape.rank == 2 && q.shape[1] >= 1, op,
          [&] { return "q must be f32 [N, V], got " + q.shape.str(); });
  const int64_t n = q.shape[0], V = q.shape[1];
  require(k >= 1 && k <= kMaxTopTokens && k <= V, op,
          [&] { return "k = " + std::to_string(k) + " outside [1, min(V, " + std::to_string(kMaxTopTokens) + ")]"; });
  require_index(op, "tokens", tokens, n * k);
  require(values.dtype == DType::F32 && values.numel() == n * k, op,
          [&] { return "values must be f32 with " + std::to_string(n * k) + " elements, got " + values.shape.str(); });
  if (n == 0) return;
  Context& ctx = s.context();
  const uint32_t wg = pow2_workgroup(ctx, 256);  // at most the shader's shared arrays
  const Pipeline& pipe = ctx.pipeline(shaders::top_tokens, {wg});
  const uint32_t rows = static_cast<uint32_t>(n);
  for_each_row_batch(ctx, static_cast<uint64_t>(V) * 4, rows, op, [&](uint32_t r0, uint32_t m) {
    const Window wq = rows_window(ctx, q, r0, m, V);
    const Window wt = rows_window(ctx, tokens, r0, m, k), wv = rows_window(ctx, values, r0, m, k);
    struct {
      uint32_t rows, vocab, k, q_off, tok_off, val_off;
    } push{m, static_cast<uint32_t>(V), k, wq.offset, wt.offset, wv.offset};
    const Grid g = grid_1d(ctx, m, 1);
    s.dispatch(pipe, {wq.view, wt.view, wv.view}, push, g.x, g.y);
  });
}

void point_masses(CommandStream& s, const TensorView& tokens, const TensorView& out) {
  const char* op = "point_masses";
  require(out.dtype == DType::F32 && out.shape.rank == 2 && out.shape[1] >= 1, op,
          [&] { return "out must be f32 [N, V], got " + out.shape.str(); });
  const int64_t n = out.shape[0], V = out.shape[1];
  require_index(op, "tokens", tokens, n);
  if (n == 0) return;
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size(), rows = static_cast<uint32_t>(n);
  const Pipeline& pipe = ctx.pipeline(shaders::point_mass, {wg});
  for_each_row_batch(ctx, static_cast<uint64_t>(V) * 4, rows, op, [&](uint32_t r0, uint32_t m) {
    const Window wt = window(ctx, tokens, r0, m), wo = rows_window(ctx, out, r0, m, V);
    struct {
      uint32_t rows, vocab, tok_off, out_off;
    } push{m, static_cast<uint32_t>(V), wt.offset, wo.offset};
    const Grid g = grid_1d(ctx, uint64_t{m} * V, wg);
    s.dispatch(pipe, {wt.view, wo.view}, push, g.x, g.y);
  });
}

void draft_tree_level(CommandStream& s, const DraftTreeLevel& a) {
  const char* op = "draft_tree_level";
  require(a.cand_tokens.shape.rank == 2 && a.cand_values.shape == a.cand_tokens.shape, op,
          [&] { return "cand_tokens and cand_values must be [m, kc], got " + a.cand_tokens.shape.str(); });
  const int64_t m = a.cand_tokens.shape[0], kc = a.cand_tokens.shape[1], k = a.choice.numel();
  require(m >= 1 && kc >= 1 && kc <= kMaxTopTokens && k <= kMaxTopTokens && (a.level > 0 || m == 1) && m <= k, op, [&] {
    return "m = " + std::to_string(m) + ", k = " + std::to_string(k) + " at level " + std::to_string(a.level);
  });
  require_index(op, "cand_tokens", a.cand_tokens, m * kc);
  require(a.cand_values.dtype == DType::F32, op, "cand_values must be f32");
  require(a.state_width >= 2 + a.level + 1 && a.state.dtype == DType::U32 &&
              a.state.numel() >= (int64_t{a.level} + 2) * k * a.state_width,
          op, "state must be u32 [levels + 1, k, state_width] with room for level + 1");
  require_index(op, "choice", a.choice, k);
  require_index(op, "tokens", a.tokens, k);
  require_index(op, "gather_ids", a.gather_ids, int64_t{a.rows} * k);
  require(a.mask.bits.buffer && a.mask.ranges.numel() == 2 * k && a.mask.bits.shape.rank == 2 &&
              a.mask.bits.shape[0] == k,
          op, "mask must have ranges [k, 2] and bits [k, words]");
  const int64_t words = a.mask.bits.shape[1];
  require(int64_t{a.scratch0} + (int64_t{a.level} + 1) * k <= words * 32, op, "the drafter slots exceed the mask");
  Context& ctx = s.context();
  const uint32_t wg = pow2_workgroup(ctx, 256);  // at most the shader's shared arrays
  const Pipeline& pipe = ctx.pipeline(shaders::draft_tree_level, {wg});
  const uint32_t K = static_cast<uint32_t>(k);
  const Window wt = window(ctx, a.cand_tokens, 0, m * kc), wv = window(ctx, a.cand_values, 0, m * kc);
  const Window wc = window(ctx, a.choice, 0, k), wk = window(ctx, a.tokens, 0, k);
  const Window wg_ids = window(ctx, a.gather_ids, 0, uint64_t{a.rows} * k);
  const Window wr = window(ctx, a.mask.ranges, 0, 2 * k), wb = window(ctx, a.mask.bits, 0, k * words);
  struct {
    uint32_t m, k, kc, level, state_width, cand_off, val_off, choice_off, tok_off, gather_off, range_off, bits_off,
        words;
    uint32_t lo, hi, scratch0, rows, row_stride, g_base;
  } push{static_cast<uint32_t>(m),
         K,
         static_cast<uint32_t>(kc),
         a.level,
         a.state_width,
         wt.offset,
         wv.offset,
         wc.offset,
         wk.offset,
         wg_ids.offset,
         wr.offset,
         wb.offset,
         static_cast<uint32_t>(words),
         a.lo,
         a.hi,
         a.scratch0,
         a.rows,
         a.row_stride,
         a.g_base};
  s.dispatch(pipe, {wt.view, wv.view, a.state, wc.view, wk.view, wg_ids.view, wr.view, wb.view}, push, 1, 1);
}

namespace {

void validate_tree_cut(const DraftTreeCut& a) {
  const char* op = "draft_tree_cut";
  require(a.cand_tokens.shape.rank == 2 && a.cand_values.shape == a.cand_tokens.shape, op,
          [&] { return "cand_tokens and cand_values must be [R, kc], got " + a.cand_tokens.shape.str(); });
  const int64_t R = a.cand_tokens.shape[0], kc = a.cand_tokens.shape[1], k = a.k, L = a.levels;
  require(k >= 1 && k <= kMaxTopTokens && kc >= 1 && kc <= k && L >= 1 && L <= kMaxCutLevels && R == 1 + (L - 1) * k,
          op, [&] {
            return "R = " + std::to_string(R) + ", kc = " + std::to_string(kc) + " for k = " + std::to_string(k) +
                   " and " + std::to_string(L) + " levels";
          });
  require_index(op, "cand_tokens", a.cand_tokens, R * kc);
  require(a.cand_values.dtype == DType::F32, op, "cand_values must be f32");
  require(a.choice.buffer && a.choice.dtype == DType::U32 && a.choice.numel() >= std::max<int64_t>((L - 1) * k, 1), op,
          "choice must be u32 [(levels - 1) * k]");
  require(a.state.dtype == DType::U32 && a.state_width >= 2 && a.state.numel() >= L * k * a.state_width, op,
          "state must be u32 [levels, k, state_width]");
  const int64_t rows = a.tree.numel() / 4, n = rows - 1;
  require(a.tree.dtype == DType::U32 && a.tree.numel() == rows * 4 && rows >= 2 && rows <= kMaxCutRows, op, [&] {
    return "tree must be u32 [out_rows, 4] with 2 <= out_rows <= " + std::to_string(kMaxCutRows) + ", got " +
           a.tree.shape.str();
  });
  require_index(op, "tokens", a.tokens, n);
  require_index(op, "test_tokens", a.test_tokens, n);
  require_index(op, "slots", a.slots, n);
  require_index(op, "parents", a.parents, n);
  require_index(op, "rope", a.rope, 3 * n);
  require_index(op, "positions", a.positions, 2 * n);
  require(a.mask.bits.buffer && a.mask.ranges.numel() == 2 * n && a.mask.bits.shape.rank == 2 &&
              a.mask.bits.shape[0] == n,
          op, "mask must have ranges [n, 2] and bits [n, words]");
  require(a.grid >= 1 && int64_t{a.scratch0} + n <= a.mask.bits.shape[1] * 32, op, "the scratch slots exceed the mask");
  if (!a.prefix.ranges.buffer) return;
  require(a.prefix.ranges.dtype == DType::U32 && a.prefix.ranges.numel() == 2 && a.prefix.bits.buffer &&
              a.prefix.bits.dtype == DType::U32 && a.prefix.bits.numel() == a.mask.bits.shape[1],
          op, "prefix must have ranges [1, 2] and bits [1, words] of the mask's words");
}

}  // namespace

void draft_tree_cut(CommandStream& s, const DraftTreeCut& a) {
  validate_tree_cut(a);
  Context& ctx = s.context();
  const int64_t R = a.cand_tokens.shape[0], kc = a.cand_tokens.shape[1], rows = a.tree.numel() / 4, n = rows - 1;
  const int64_t words = a.mask.bits.shape[1], nc = std::max<int64_t>((a.levels - 1) * a.k, 1);
  const uint32_t wg = pow2_workgroup(ctx, 256);  // at most the shader's shared arrays
  const Pipeline& pipe = ctx.pipeline(shaders::draft_tree_cut, {wg});
  const Window wt = window(ctx, a.cand_tokens, 0, R * kc), wv = window(ctx, a.cand_values, 0, R * kc);
  const Window wc = window(ctx, a.choice, 0, nc), wtr = window(ctx, a.tree, 0, rows * 4);
  const Window wk = window(ctx, a.tokens, 0, n), wrp = window(ctx, a.rope, 0, 3 * n);
  const Window ws = window(ctx, a.slots, 0, n), wr = window(ctx, a.mask.ranges, 0, 2 * n);
  const Window wb = window(ctx, a.mask.bits, 0, n * words), wp = window(ctx, a.parents, 0, n);
  const Window wpos = window(ctx, a.positions, 0, 2 * n), wtt = window(ctx, a.test_tokens, 0, n);
  // Without a prefix row the shader reads none: its bindings take the mask's own.
  const bool has_prefix = a.prefix.ranges.buffer != VK_NULL_HANDLE;
  const Window wpr = has_prefix ? window(ctx, a.prefix.ranges, 0, 2) : wr;
  const Window wpb = has_prefix ? window(ctx, a.prefix.bits, 0, words) : wb;
  struct {
    uint32_t k, kc, levels, state_width, out_rows, cand_off, val_off, choice_off, tree_off, tok_off, rope_off, slot_off;
    uint32_t range_off, bits_off, words, par_off, pos_off, test_tok_off, c, root_slot, grid, image_tokens, scratch0;
    uint32_t seq_first, seq_table;
    uint32_t has_prefix, prefix_range_off, prefix_bits_off;
  } push{a.k,
         static_cast<uint32_t>(kc),
         a.levels,
         a.state_width,
         static_cast<uint32_t>(rows),
         wt.offset,
         wv.offset,
         wc.offset,
         wtr.offset,
         wk.offset,
         wrp.offset,
         ws.offset,
         wr.offset,
         wb.offset,
         static_cast<uint32_t>(words),
         wp.offset,
         wpos.offset,
         wtt.offset,
         a.c,
         a.root_slot,
         a.grid,
         a.image_tokens,
         a.scratch0,
         a.seq_first,
         a.seq_table,
         has_prefix ? 1u : 0u,
         wpr.offset,
         wpb.offset};
  s.dispatch(pipe,
             {wt.view, wv.view, wc.view, a.state, wtr.view, wk.view, wrp.view, ws.view, wr.view, wb.view, wp.view,
              wpos.view, wtt.view, wpr.view, wpb.view},
             push, 1, 1);
}

}  // namespace vkspec::ops
