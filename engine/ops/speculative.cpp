#include "engine/ops/speculative.h"

#include <algorithm>
#include <cmath>

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

void require_probs(const char* op, const char* what, const TensorView& v) {
  require(v.dtype == DType::F32 && v.shape.rank == 2 && v.shape[1] >= 1, op,
          [&] { return std::string(what) + " must be f32 [N, V], got " + v.shape.str(); });
}

// v must be f32 of like's shape; the message names like when like_name is given.
void require_f32_like(const char* op, const char* what, const TensorView& v, const TensorView& like,
                      const char* like_name = nullptr) {
  require(v.dtype == DType::F32 && v.shape == like.shape, op, [&] {
    const std::string as = like_name ? std::string("like ") + like_name + " " : std::string();
    return std::string(what) + " must be f32 " + as + like.shape.str() + ", got " + v.shape.str();
  });
}

void require_neighbours(const char* op, const Context& ctx, const TensorView& neighbours, int64_t V, uint32_t k) {
  require(neighbours.dtype == DType::U32 && neighbours.shape.rank == 2 && neighbours.shape[0] == V, op,
          [&] { return "neighbours must be u32 [" + std::to_string(V) + ", k_max], got " + neighbours.shape.str(); });
  const int64_t k_max = neighbours.shape[1];
  require(k >= 1 && k <= k_max, op,
          [&] { return "k = " + std::to_string(k) + " outside [1, " + std::to_string(k_max) + "]"; });
  require(static_cast<uint64_t>(neighbours.bytes) <= ctx.caps().max_storage_buffer_range, op,
          [&] { return "neighbour table " + neighbours.shape.str() + " exceeds maxStorageBufferRange"; });
}

void require_keys(const char* op, const RowKeys& keys, int64_t n) {
  if (!keys.given()) return;
  require_index(op, "keys.seeds", keys.seeds, 2 * n);
  require_index(op, "keys.rounds", keys.rounds, n);
}

// The bindings and push words of a dispatch's rows [r0, r0 + n) under keys; `bound` stands in
// for the bindings without keys (an already-bound view).
struct KeyWindows {
  TensorView seeds, rounds;
  uint32_t per_row = 0, seed_off = 0, round_off = 0;
};

KeyWindows key_windows(Context& ctx, const RowKeys& keys, uint32_t r0, uint32_t n, const TensorView& bound) {
  if (!keys.given()) return {bound, bound};
  const Window ws = window(ctx, keys.seeds, uint64_t{r0} * 2, uint64_t{n} * 2), wr = window(ctx, keys.rounds, r0, n);
  return {ws.view, wr.view, 1u, ws.offset, wr.offset};
}

// The last push words of spec_accept and spec_residual: the call's key, then the per-row keys'.
struct KeyPush {
  uint32_t seed_lo, seed_hi, purpose, per_row_key, seed_off, round_off;
};

KeyPush key_push(const DrawKeys& keys, const KeyWindows& wk) {
  return {static_cast<uint32_t>(keys.seed),
          static_cast<uint32_t>(keys.seed >> 32),
          keys.purpose,
          wk.per_row,
          wk.seed_off,
          wk.round_off};
}

// The accept kernel's rows: `vocab` values per row of p and q, read at the row's draft token
// (gathered), or one given value per row (vocab 1, no draft: spec_accept_values).
struct AcceptDispatch {
  TensorView p, q, draft, positions, accept;
  bool gathered = false;
  uint32_t rows = 0, vocab = 1;
  DrawKeys keys;
};

void accept_dispatch(CommandStream& s, const AcceptDispatch& a, const char* op) {
  if (a.rows == 0) return;
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size(), vocab = a.vocab;
  const Pipeline& pipe = ctx.pipeline(shaders::spec_accept, {wg});
  for_each_row_batch(ctx, uint64_t{vocab} * 4, a.rows, op, [&](uint32_t r0, uint32_t n) {
    const Window wp = rows_window(ctx, a.p, r0, n, vocab), wq = rows_window(ctx, a.q, r0, n, vocab);
    const Window wpos = window(ctx, a.positions, r0, n), wacc = window(ctx, a.accept, r0, n);
    const Window wd = a.gathered ? window(ctx, a.draft, r0, n) : wpos;  // unused binding: an already-bound view
    const KeyWindows wk = key_windows(ctx, a.keys.rows, r0, n, wpos.view);
    struct {
      uint32_t rows, vocab, p_off, q_off, draft_off, pos_off, acc_off, gathered;
      KeyPush key;
    } push{n,
           vocab,
           wp.offset,
           wq.offset,
           wd.offset,
           wpos.offset,
           wacc.offset,
           a.gathered ? 1u : 0u,
           key_push(a.keys, wk)};
    const Grid g = grid_1d(ctx, n, wg);
    s.dispatch(pipe, {wp.view, wq.view, wd.view, wpos.view, wacc.view, wk.seeds, wk.rounds}, push, g.x, g.y);
  });
}

}  // namespace

void spec_accept(CommandStream& s, const TensorView& p, const TensorView& q, const TensorView& draft,
                 const TensorView& positions, const DrawKeys& keys, const TensorView& accept) {
  const char* op = "spec_accept";
  require_probs(op, "p", p);
  require_f32_like(op, "q", q, p, "p");
  const int64_t n = p.shape[0];
  require_index(op, "draft", draft, n);
  require_index(op, "positions", positions, n);
  require_index(op, "accept", accept, n);
  require_keys(op, keys.rows, n);
  AcceptDispatch a;
  a.p = p;
  a.q = q;
  a.draft = draft;
  a.positions = positions;
  a.accept = accept;
  a.gathered = true;
  a.rows = static_cast<uint32_t>(n);
  a.vocab = static_cast<uint32_t>(p.shape[1]);
  a.keys = keys;
  accept_dispatch(s, a, op);
}

void spec_accept_values(CommandStream& s, const TensorView& p_x, const TensorView& q_x, const TensorView& positions,
                        const DrawKeys& keys, const TensorView& accept) {
  const char* op = "spec_accept_values";
  const int64_t n = p_x.numel();
  require(p_x.dtype == DType::F32 && q_x.dtype == DType::F32 && q_x.numel() == n, op,
          [&] { return "p_x and q_x must be f32 of equal size, got " + p_x.shape.str() + " and " + q_x.shape.str(); });
  require_index(op, "positions", positions, n);
  require_index(op, "accept", accept, n);
  require_keys(op, keys.rows, n);
  AcceptDispatch a;
  a.p = p_x;
  a.q = q_x;
  a.positions = positions;
  a.accept = accept;
  a.rows = static_cast<uint32_t>(n);
  a.keys = keys;
  accept_dispatch(s, a, op);
}

void spec_residual_sample(CommandStream& s, const TensorView& p, const TensorView& q, const TensorView& positions,
                          const DrawKeys& keys, const TensorView& tokens, const TensorView& accept,
                          const TensorView& draft) {
  const char* op = "spec_residual_sample";
  require_probs(op, "p", p);
  require_f32_like(op, "q", q, p, "p");
  const int64_t n = p.shape[0];
  require_index(op, "positions", positions, n);
  require_index(op, "tokens", tokens, n);
  const bool resolve = accept.buffer != VK_NULL_HANDLE;
  require(resolve == (draft.buffer != VK_NULL_HANDLE), op, "accept and draft come together");
  if (resolve) {
    require_index(op, "accept", accept, n);
    require_index(op, "draft", draft, n);
  }
  require_keys(op, keys.rows, n);
  if (n == 0) return;
  Context& ctx = s.context();
  const uint32_t V = static_cast<uint32_t>(p.shape[1]), rows = static_cast<uint32_t>(n);
  const Pipeline& pipe = ctx.pipeline(shaders::spec_residual, {chunk_workgroup_size(ctx, V)});
  for_each_row_batch(ctx, uint64_t{V} * 4, rows, op, [&](uint32_t r0, uint32_t m) {
    const Window wp = rows_window(ctx, p, r0, m, V), wq = rows_window(ctx, q, r0, m, V);
    const Window wpos = window(ctx, positions, r0, m), wtok = window(ctx, tokens, r0, m);
    const Window wacc = resolve ? window(ctx, accept, r0, m) : wpos;
    const Window wd = resolve ? window(ctx, draft, r0, m) : wpos;
    const KeyWindows wk = key_windows(ctx, keys.rows, r0, m, wpos.view);
    struct {
      uint32_t rows, vocab, p_off, q_off, pos_off, acc_off, draft_off, tok_off, resolve;
      KeyPush key;
    } push{m,           V,         wp.offset,   wq.offset,         wpos.offset,
           wacc.offset, wd.offset, wtok.offset, resolve ? 1u : 0u, key_push(keys, wk)};
    const Grid g = grid_1d(ctx, m, 1);
    s.dispatch(pipe, {wp.view, wq.view, wpos.view, wacc.view, wd.view, wtok.view, wk.seeds, wk.rounds}, push, g.x, g.y);
  });
}

void pooled_prob(CommandStream& s, const TensorView& p, const TensorView& tokens, const TensorView& neighbours,
                 uint32_t k, const TensorView& out) {
  const char* op = "pooled_prob";
  require_probs(op, "p", p);
  const int64_t n = p.shape[0], V = p.shape[1];
  require_index(op, "tokens", tokens, n);
  require_neighbours(op, s.context(), neighbours, V, k);
  const int64_t k_max = neighbours.shape[1];
  require(out.dtype == DType::F32 && out.numel() == n, op,
          [&] { return "out must be f32 with " + std::to_string(n) + " elements, got " + out.shape.str(); });
  if (n == 0) return;
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size(), rows = static_cast<uint32_t>(n);
  const Pipeline& pipe = ctx.pipeline(shaders::pooled_prob, {wg});
  for_each_row_batch(ctx, static_cast<uint64_t>(V) * 4, rows, op, [&](uint32_t r0, uint32_t m) {
    const Window wp = rows_window(ctx, p, r0, m, V);
    const Window wt = window(ctx, tokens, r0, m), wo = window(ctx, out, r0, m);
    struct {
      uint32_t rows, vocab, p_off, tok_off, out_off, k, k_max;
    } push{m, static_cast<uint32_t>(V), wp.offset, wt.offset, wo.offset, k, static_cast<uint32_t>(k_max)};
    const Grid g = grid_1d(ctx, m, wg);
    s.dispatch(pipe, {wp.view, wt.view, neighbours, wo.view}, push, g.x, g.y);
  });
}

void residual_distribution(CommandStream& s, const TensorView& p, const TensorView& q, const TensorView& out) {
  const char* op = "residual_distribution";
  require_probs(op, "p", p);
  require_f32_like(op, "q", q, p);
  require_f32_like(op, "out", out, p);
  const int64_t n = p.shape[0];
  if (n == 0) return;
  Context& ctx = s.context();
  const uint32_t V = static_cast<uint32_t>(p.shape[1]), rows = static_cast<uint32_t>(n);
  const Pipeline& pipe = ctx.pipeline(shaders::residual_distribution, {chunk_workgroup_size(ctx, V)});
  for_each_row_batch(ctx, uint64_t{V} * 4, rows, op, [&](uint32_t r0, uint32_t m) {
    const Window wp = rows_window(ctx, p, r0, m, V), wq = rows_window(ctx, q, r0, m, V);
    const Window wo = rows_window(ctx, out, r0, m, V);
    struct {
      uint32_t rows, vocab, p_off, q_off, out_off;
    } push{m, V, wp.offset, wq.offset, wo.offset};
    const Grid g = grid_1d(ctx, m, 1);
    s.dispatch(pipe, {wp.view, wq.view, wo.view}, push, g.x, g.y);
  });
}

void tree_tests(CommandStream& s, const TreeTests& t) {
  const char* op = "tree_tests";
  require_probs(op, "probs", t.probs);
  const int64_t M = t.probs.shape[0];
  require_f32_like(op, "q", t.q, t.probs, "probs");
  require_f32_like(op, "scratch", t.scratch, t.probs, "probs");
  require(!overlap(t.scratch, t.probs) && !overlap(t.scratch, t.q), op, "scratch must not overlap probs or q");
  require_index(op, "draft", t.draft, M);
  require(t.parent.dtype == DType::I32 && t.parent.numel() == M, op,
          [&] { return "parent must be i32 [" + std::to_string(M) + "]"; });
  require(t.positions.dtype == DType::U32 && t.positions.numel() == 2 * M, op,
          [&] { return "positions must be u32 [" + std::to_string(M) + ", 2]"; });
  require_index(op, "accept", t.accept, M);
  require_index(op, "final_token", t.final_token, M);
  const RowKeys& keys = t.keys;
  if (keys.given()) {
    require_index(op, "keys.seeds", keys.seeds, 2 * M);
    require_index(op, "keys.rounds", keys.rounds, 2 * M);
  }
  if (M == 0) return;
  Context& ctx = s.context();
  require(static_cast<uint64_t>(t.probs.bytes) <= ctx.caps().max_storage_buffer_range, op, [&] {
    return "a tree of " + std::to_string(M) + " rows of " + std::to_string(t.probs.shape[1]) +
           " exceeds one binding; verify it in parts";
  });
  const uint32_t V = static_cast<uint32_t>(t.probs.shape[1]);
  const Pipeline& pipe = ctx.pipeline(shaders::tree_tests, {chunk_workgroup_size(ctx, V)});
  struct {
    uint32_t nodes, vocab, seed_lo, seed_hi, accept_purpose0, residual_purpose, per_row_key;
  } push{static_cast<uint32_t>(M),
         V,
         static_cast<uint32_t>(t.seed),
         static_cast<uint32_t>(t.seed >> 32),
         t.accept_purpose,
         t.residual_purpose,
         keys.given() ? 1u : 0u};
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(M), 1);
  // Without keys, bindings 8 and 9 take an already-bound view (never read).
  const TensorView seeds = keys.given() ? keys.seeds : t.positions, rounds = keys.given() ? keys.rounds : t.positions;
  s.dispatch(pipe, {t.probs, t.q, t.draft, t.parent, t.positions, t.scratch, t.accept, t.final_token, seeds, rounds},
             push, g.x, g.y);
}

void exclude_neighbourhood(CommandStream& s, const TensorView& q, const TensorView& p, const TensorView& relaxed,
                           const TensorView& draft, const TensorView& neighbours, uint32_t count,
                           const TensorView& out) {
  const char* op = "exclude_neighbourhood";
  require_probs(op, "q", q);
  const int64_t n = q.shape[0], V = q.shape[1];
  require_f32_like(op, "p", p, q);
  require_f32_like(op, "relaxed", relaxed, q);
  require_f32_like(op, "out", out, q);
  require(!overlap(out, q) && !overlap(out, p) && !overlap(out, relaxed), op, "out must not overlap q, p or relaxed");
  require_index(op, "draft", draft, n);
  require_neighbours(op, s.context(), neighbours, V, 1);
  require(count < static_cast<uint64_t>(neighbours.shape[1]), op, [&] {
    return "count = " + std::to_string(count) + " must be below the table's " + std::to_string(neighbours.shape[1]) +
           " entries per row";
  });
  if (n == 0) return;
  Context& ctx = s.context();
  const uint32_t wg = std::min<uint32_t>(ctx.default_workgroup_size(), 64), rows = static_cast<uint32_t>(n);
  const Pipeline& pipe = ctx.pipeline(shaders::exclude_neighbourhood, {wg});
  for_each_row_batch(ctx, static_cast<uint64_t>(V) * 4, rows, op, [&](uint32_t r0, uint32_t m) {
    const Window wq = rows_window(ctx, q, r0, m, V), wp = rows_window(ctx, p, r0, m, V);
    const Window wr = rows_window(ctx, relaxed, r0, m, V), wo = rows_window(ctx, out, r0, m, V);
    const Window wd = window(ctx, draft, r0, m);
    struct {
      uint32_t rows, vocab, q_off, p_off, relaxed_off, draft_off, out_off, count, k_max;
    } push{m,
           static_cast<uint32_t>(V),
           wq.offset,
           wp.offset,
           wr.offset,
           wd.offset,
           wo.offset,
           count,
           static_cast<uint32_t>(neighbours.shape[1])};
    const Grid g = grid_1d(ctx, m, 1);
    s.dispatch(pipe, {wq.view, wp.view, wr.view, wd.view, neighbours, wo.view}, push, g.x, g.y);
  });
}

void relax_neighbourhood(CommandStream& s, const TensorView& p, const TensorView& draft, const TensorView& neighbours,
                         uint32_t k, float delta, const TensorView& out, float per_mass) {
  const char* op = "relax_neighbourhood";
  require_probs(op, "p", p);
  const int64_t n = p.shape[0], V = p.shape[1];
  require_index(op, "draft", draft, n);
  require_neighbours(op, s.context(), neighbours, V, k);
  require_f32_like(op, "out", out, p);
  require(!overlap(out, p), op, "out must not overlap p");
  require(std::isfinite(delta) && delta >= 0.0f, op,
          [&] { return "delta must be finite and >= 0, got " + std::to_string(delta); });
  require(std::isfinite(per_mass) && per_mass >= 0.0f, op,
          [&] { return "per_mass must be finite and >= 0, got " + std::to_string(per_mass); });
  if (n == 0) return;
  Context& ctx = s.context();
  const uint32_t wg = std::min<uint32_t>(ctx.default_workgroup_size(), 64), rows = static_cast<uint32_t>(n);
  const Pipeline& pipe = ctx.pipeline(shaders::relax_neighbourhood, {wg});
  for_each_row_batch(ctx, static_cast<uint64_t>(V) * 4, rows, op, [&](uint32_t r0, uint32_t m) {
    const Window wp = rows_window(ctx, p, r0, m, V), wo = rows_window(ctx, out, r0, m, V);
    const Window wd = window(ctx, draft, r0, m);
    struct {
      uint32_t rows, vocab, p_off, draft_off, out_off, k, k_max;
      float delta, per_mass;
    } push{m,
           static_cast<uint32_t>(V),
           wp.offset,
           wd.offset,
           wo.offset,
           k,
           static_cast<uint32_t>(neighbours.shape[1]),
           delta,
           per_mass};
    const Grid g = grid_1d(ctx, m, 1);
    s.dispatch(pipe, {wp.view, wd.view, neighbours, wo.view}, push, g.x, g.y);
  });
}

void gsd_group_mass(CommandStream& s, const GsdGroupMass& a) {
  const char* op = "gsd_group_mass";
  require_probs(op, "p", a.p);
  const int64_t n = a.p.shape[0], V = a.p.shape[1];
  require_f32_like(op, "q", a.q, a.p);
  require_index(op, "draft", a.draft, n);
  require(a.embeddings.dtype == DType::F32 && a.embeddings.shape.rank == 2 && a.embeddings.shape[0] == V, op,
          [&] { return "embeddings must be f32 [" + std::to_string(V) + ", E], got " + a.embeddings.shape.str(); });
  require(a.below + a.above <= 64, op, "below + above must be <= 64");
  require(std::isfinite(a.gap) && a.gap >= 0.0f && std::isfinite(a.dist2) && a.dist2 >= 0.0f, op,
          "gap and dist2 must be finite and >= 0");
  require(a.p_group.dtype == DType::F32 && a.p_group.numel() == n && a.q_group.dtype == DType::F32 &&
              a.q_group.numel() == n,
          op, [&] { return "p_group and q_group must be f32 with " + std::to_string(n) + " elements"; });
  if (n == 0) return;
  Context& ctx = s.context();
  const uint32_t wg = pow2_workgroup(ctx, 64);  // at most the shader's shared arrays
  const Pipeline& pipe = ctx.pipeline(shaders::gsd_group_mass, {wg});
  const uint32_t rows = static_cast<uint32_t>(n);
  for_each_row_batch(ctx, static_cast<uint64_t>(V) * 4, rows, op, [&](uint32_t r0, uint32_t m) {
    const Window wp = rows_window(ctx, a.p, r0, m, V), wq = rows_window(ctx, a.q, r0, m, V);
    const Window wd = window(ctx, a.draft, r0, m), wpg = window(ctx, a.p_group, r0, m),
                 wqg = window(ctx, a.q_group, r0, m);
    struct {
      uint32_t rows, vocab, p_off, q_off, draft_off, outp_off, outq_off, below, above, dim;
      float gap, dist2;
    } push{m,          static_cast<uint32_t>(V),
           wp.offset,  wq.offset,
           wd.offset,  wpg.offset,
           wqg.offset, a.below,
           a.above,    static_cast<uint32_t>(a.embeddings.shape[1]),
           a.gap,      a.dist2};
    const Grid g = grid_1d(ctx, m, 1);
    s.dispatch(pipe, {wp.view, wq.view, wd.view, a.embeddings, wpg.view, wqg.view}, push, g.x, g.y);
  });
}

}  // namespace vkspec::ops
