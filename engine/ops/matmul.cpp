#include "engine/ops/matmul.h"

#include <numeric>

#include "engine/ops/dispatch_util.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/kv_write.h"
#include "engine/ops/matmul_tiles.h"
#include "engine/ops/rms_norm.h"
#include "engine/ops/swiglu.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {
namespace {

// The broadcast kernel sizes its grid with the subgroup size, splits it into lane pairs and reads
// a 16-byte texel (4 pairs of halves, 2 of floats) per weight row at a time.
bool has_broadcast(const DeviceCaps& c, DType w) {
  const uint32_t pairs_per_texel = w == DType::F16 ? 4 : 2;
  return c.shader_int64 && c.subgroup_lane_reads && c.max_texel_buffer_elements && c.subgroup_size >= pairs_per_texel &&
         c.subgroup_size % pairs_per_texel == 0;
}

// Every weight row starts on a texel.
bool broadcast_aligned(int64_t k, DType w) { return k % (w == DType::F16 ? 8 : 4) == 0; }

// Activation rows per subgroup tile for m rows: the size from a small menu (each is a pipeline
// compiled at first use) that computes the fewest padded rows, at most the table's limit; the
// last tile of 34 rows (window 16 with CFG) in tiles of 16 would be 29 % padding.
uint32_t broadcast_tile_rows(uint32_t m, uint32_t limit) {
  uint32_t best = limit, best_rows = ceil_div(m, limit) * limit;
  for (uint32_t tm : {8u, 12u, 16u}) {
    if (tm >= limit) continue;
    const uint32_t rows = ceil_div(m, tm) * tm;
    if (rows < best_rows) best = tm, best_rows = rows;
  }
  return best;
}

// Widest load every row start allows: K % 8 == 0 -> 8 elements, K % 4 == 0 -> 4, else 1.
uint32_t vector_width(int64_t k) { return k % 8 == 0 ? 8 : k % 4 == 0 ? 4 : 1; }

// Rows per dispatch so each binding of rows x row_bytes fits maxStorageBufferRange and every
// chunk starts on minStorageBufferOffsetAlignment (row_bytes: one row per tensor sharing the split).
int64_t rows_per_dispatch(int64_t rows, std::initializer_list<uint64_t> row_bytes, const DeviceCaps& caps) {
  const uint64_t align = std::max<uint64_t>(caps.min_storage_buffer_offset_alignment, 4);
  uint64_t step = 1, widest = 1;
  for (uint64_t b : row_bytes) {
    step = std::lcm(step, align / std::gcd(b, align));
    widest = std::max(widest, b);
  }
  // Ranges are rounded up to whole 16-byte vectors when bound, hence the slack of 16 bytes.
  const uint64_t fit = (caps.max_storage_buffer_range - 16) / widest / step * step;
  if (fit == 0) throw Error("matmul: one row of " + std::to_string(widest) + " bytes exceeds maxStorageBufferRange");
  return static_cast<int64_t>(std::min<uint64_t>(fit, static_cast<uint64_t>(rows)));
}

// What a kernel folds in (MatmulFusion's parts that it takes).
struct Fold {
  bool swiglu = false;      // x is [m, 2k] = a | b and the kernel multiplies silu(a) * b
  bool norm = false;        // x's rows RMS-normalised and scaled by g
  bool accumulate = false;  // y += the product
  TensorView g;             // the norm's weight (norm), else any view (a binding needs one)
  float eps = 0.0f;
  const MatmulFusion::RopeKv* rope = nullptr;  // the q|k|v projection's RoPE and cache write
  RopeKvLayout rope_layout;
  int64_t plan_rows = 0;  // the rows the GEMV kernel is chosen for (MatmulFusion::rows_per_image); 0: M
};

struct Dispatch {
  TensorView x, w, y;  // x: rows m0.., w: rows n0.., y: rows m0.. (all columns)
  uint32_t m, n, k, ldy, y_col0;
  bool f16;
  Fold fold;
  uint32_t m0 = 0;  // the first row (token) of this dispatch
};

// The push constants rope_kv_fold.glsl adds after a kernel's own (ROPE_KV_PUSH).
struct RopeKvPush {
  uint32_t row0, T, H, head_dim, S, slot_batch_stride, pos_rows, n_pos;
};
RopeKvPush rope_kv_push(const Dispatch& d) {
  const RopeKvLayout& l = d.fold.rope_layout;
  const MatmulFusion::RopeKv& r = *d.fold.rope;
  return {
      d.m0,       l.T,    static_cast<uint32_t>(r.heads), static_cast<uint32_t>(r.head_dim), l.S, l.slot_batch_stride,
      l.pos_rows, l.n_pos};
}
uint32_t cache_f16(const Fold& f) { return f.rope->k_cache.dtype == DType::F16 ? 1u : 0u; }

// The push constants of both GEMV kernels (matmul_gemv.comp, matmul_rows.comp).
struct GemvPush {
  uint32_t m, n, k, ldy, y_col0;
  float eps;  // the folded norm's
};

// The rows the GEMV pipeline is compiled for: exact up to 8 (decoding), else the next multiple of 8,
// so a run with windows of every size builds at most 15 pipelines per weight type, not 64.
uint32_t gemv_compiled_rows(uint32_t m) { return m <= 8 ? m : ceil_div(m, 8u) * 8; }

void record_gemv(CommandStream& s, const Dispatch& d, const MatmulTiles& t) {
  Context& ctx = s.context();
  const DeviceCaps& caps = ctx.caps();
  const uint32_t wg = std::min(t.gemv_workgroup, caps.max_workgroup_invocations);
  const Fold& f = d.fold;
  const uint32_t rows = gemv_compiled_rows(d.m), subgroups = max_subgroups_in(caps, wg);
  const Pipeline& p =
      f.rope
          ? ctx.pipeline(shaders::matmul_gemv_rope_kv, {wg, rows, t.gemv_outputs, subgroups, d.f16 ? 1u : 0u,
                                                        vector_width(d.k), 0u, f.norm ? 1u : 0u, 0u, cache_f16(f)})
          : ctx.pipeline(shaders::matmul_gemv, {wg, rows, t.gemv_outputs, subgroups, d.f16 ? 1u : 0u, vector_width(d.k),
                                                f.swiglu ? 1u : 0u, f.norm ? 1u : 0u, f.accumulate ? 1u : 0u});
  const GemvPush push{d.m, d.n, d.k, d.ldy, d.y_col0, f.eps};
  // One grid_1d "invocation" per workgroup: the spill into y keeps the count within limits.
  const Grid g = grid_1d(ctx, ceil_div(d.n, t.gemv_outputs), 1);
  if (f.rope) {
    const MatmulFusion::RopeKv& r = *f.rope;
    const struct {
      GemvPush gemv;
      RopeKvPush rope;
    } both{push, rope_kv_push(d)};
    s.dispatch(p, {d.x, d.w, d.y, f.g, r.positions, r.table, r.slots, r.k_cache, r.v_cache}, both, g.x, g.y);
  } else {
    s.dispatch(p, {d.x, d.w, d.y, f.g}, push, g.x, g.y);
  }
}

// Whether the GEMV path takes the row-block kernel for m rows.
bool takes_rows_kernel(const MatmulTiles& t, uint32_t m) {
  return t.rows_outputs && t.rows_per_subgroup && m >= t.rows_from;
}

void record_gemv_rows(CommandStream& s, const Dispatch& d, const MatmulTiles& t) {
  Context& ctx = s.context();
  const DeviceCaps& caps = ctx.caps();
  // A subgroup per block of rows, rounded up to an even count so that windows of every size build
  // at most 10 pipelines per weight type up to 80 rows (tree methods change M from step to step);
  // a spare subgroup finds no block and returns. The shader loops over blocks when the workgroup
  // has fewer subgroups than blocks (more than the device's workgroup holds).
  const uint32_t sg = std::max(caps.subgroup_size, 1u);
  const uint32_t blocks = ceil_div(d.m, t.rows_per_subgroup);
  const uint32_t subgroups =
      std::max(1u, std::min(blocks + (blocks > 1 ? blocks % 2 : 0), caps.max_workgroup_invocations / sg));
  const Fold& f = d.fold;
  const Pipeline& p =
      ctx.pipeline(shaders::matmul_rows, {subgroups * sg, t.rows_per_subgroup, t.rows_outputs, d.f16 ? 1u : 0u,
                                          vector_width(d.k), f.norm ? 1u : 0u, f.accumulate ? 1u : 0u});
  const GemvPush push{d.m, d.n, d.k, d.ldy, d.y_col0, f.eps};
  const Grid g = grid_1d(ctx, ceil_div(d.n, t.rows_outputs), 1);
  s.dispatch(p, {d.x, d.w, d.y, f.g}, push, g.x, g.y);
}

void record_gemm(CommandStream& s, const Dispatch& d, const MatmulTiles& t) {
  Context& ctx = s.context();
  const uint32_t wg = std::min(t.gemm_workgroup, ctx.caps().max_workgroup_invocations);
  const Pipeline& p = ctx.pipeline(shaders::matmul_gemm, {wg, t.gemm_tm, t.gemm_tn, d.f16 ? 1u : 0u, vector_width(d.k),
                                                          0u, d.fold.accumulate ? 1u : 0u});
  struct {
    uint32_t m, n, k, ldy, y_col0, tiles_n;
  } push{d.m, d.n, d.k, d.ldy, d.y_col0, ceil_div(d.n, t.gemm_tn)};
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(ceil_div(d.m, t.gemm_tm)) * push.tiles_n, wg);
  s.dispatch(p, {d.x, d.w, d.y}, push, g.x, g.y);
}

void record_broadcast(CommandStream& s, const Dispatch& d, const MatmulTiles& t) {
  Context& ctx = s.context();
  const uint32_t sg = ctx.caps().subgroup_size;
  uint32_t tm = d.f16 ? t.bcast_tm_f16 : t.bcast_tm_f32, tn = d.f16 ? t.bcast_tn_f16 : t.bcast_tn_f32;
  if (!tm || !tn) {  // a device whose table row does not tune this kernel (forced path)
    tm = 8;
    tn = 8;
  }
  if (d.m <= std::min(t.gemv_max_rows, 8u)) {
    tm = d.m;  // decoding: one subgroup tile holds every activation row
    tn = t.bcast_gemv_tn ? t.bcast_gemv_tn : tn;
  } else {
    tm = broadcast_tile_rows(d.m, tm);
  }
  // One subgroup per workgroup spreads small problems over every thread of a CPU device.
  const Fold& f = d.fold;
  const Pipeline& p = ctx.pipeline(shaders::matmul_bcast, {sg, tm, tn, d.f16 ? 1u : 0u, f.swiglu ? 1u : 0u,
                                                           f.norm ? 1u : 0u, f.accumulate ? 1u : 0u});
  struct {
    uint32_t m, n, k, ldy, y_col0, tiles_n, w_texel0;
    float eps;
  } push{d.m,
         d.n,
         d.k,
         d.ldy,
         d.y_col0,
         ceil_div(d.n, static_cast<uint64_t>(sg) * tn),
         static_cast<uint32_t>((d.w.offset - d.w.texels.begin) / 16),
         f.eps};
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(ceil_div(d.m, tm)) * push.tiles_n, 1);
  s.dispatch(p, {d.x, d.w, d.y, f.g}, push, g.x, g.y);
}

void record_coopmat(CommandStream& s, const Dispatch& d, const MatmulTiles& t) {
  Context& ctx = s.context();
  const uint32_t wg = ctx.caps().subgroup_size * t.coop_warps_m * t.coop_warps_n;
  const Pipeline& p = ctx.pipeline(shaders::matmul_coopmat, {wg, t.coop_warps_m, t.coop_warps_n, d.f16 ? 1u : 0u,
                                                             d.k % 4 == 0 ? 4u : 1u, t.coop_bk});
  struct {
    uint32_t m, n, k, ldy, y_col0;
  } push{d.m, d.n, d.k, d.ldy, d.y_col0};
  const uint32_t bm = 32 * t.coop_warps_m, bn = 32 * t.coop_warps_n;  // 2 x 2 fragments of 16 per subgroup
  const uint32_t gy = ceil_div(d.m, bm);
  require(gy <= ctx.caps().max_workgroup_count[1], "matmul",
          [&] { return "M = " + std::to_string(d.m) + " needs too many workgroups"; });
  s.dispatch(p, {d.x, d.w, d.y}, push, ceil_div(d.n, bn), gy);
}

}  // namespace

const char* matmul_path_name(MatmulPath p) {
  switch (p) {
    case MatmulPath::Auto: return "auto";
    case MatmulPath::Gemv: return "gemv";
    case MatmulPath::Gemm: return "gemm";
    case MatmulPath::CoopMat: return "coopmat";
    case MatmulPath::Broadcast: return "broadcast";
  }
  return "?";
}

bool matmul_path_supported(Context& ctx, MatmulPath path, int64_t m, int64_t k, DType w) {
  switch (path) {
    case MatmulPath::Auto:
    case MatmulPath::Gemm: return true;
    case MatmulPath::Gemv: return m > 0 && ctx.caps().subgroup_reduce;
    case MatmulPath::CoopMat: return ctx.caps().coopmat_f16_16x16x16;
    case MatmulPath::Broadcast: return has_broadcast(ctx.caps(), w) && broadcast_aligned(k, w);
  }
  return false;
}

namespace {
// The device's table row with the context's overrides.
MatmulTiles tiles_of(Context& ctx) {
  MatmulTiles t = matmul_tiles(ctx.caps());
  if (ctx.options().gemv_max_rows) t.gemv_max_rows = ctx.options().gemv_max_rows;
  if (const auto& tile = ctx.options().gemv_rows_tile) {
    t.rows_outputs = tile->outputs;
    t.rows_per_subgroup = tile->rows_per_subgroup;
    if (tile->from) t.rows_from = tile->from;
  }
  return t;
}
}  // namespace

MatmulPath choose_matmul_path(Context& ctx, int64_t m, int64_t k, DType w) {
  const MatmulTiles t = tiles_of(ctx);
  if (t.bcast_gemv_tn && matmul_path_supported(ctx, MatmulPath::Broadcast, m, k, w)) return MatmulPath::Broadcast;
  if (m <= t.gemv_max_rows && ctx.caps().subgroup_reduce) return MatmulPath::Gemv;
  if (!ctx.options().disable_coopmat && ctx.caps().coopmat_f16_16x16x16) return MatmulPath::CoopMat;
  return MatmulPath::Gemm;
}

namespace {

// The shapes for error messages.
std::string shapes_of(const TensorView& x, const TensorView& w, const TensorView& y) {
  return "x " + x.shape.str() + " " + dtype_name(x.dtype) + ", w " + w.shape.str() + " " + dtype_name(w.dtype) +
         ", y " + y.shape.str() + " " + dtype_name(y.dtype);
}

// The device's table row with the context's overrides and a kernel shape's.
MatmulTiles tiles_with(Context& ctx, const MatmulShape& shape) {
  MatmulTiles tiles = tiles_of(ctx);
  if (shape.gemv_workgroup) tiles.gemv_workgroup = shape.gemv_workgroup;
  if (shape.gemv_outputs) tiles.gemv_outputs = shape.gemv_outputs;
  if (shape.coop_bk) tiles.coop_bk = shape.coop_bk;
  if (shape.rows_outputs && shape.rows_per_subgroup) {
    tiles.rows_outputs = shape.rows_outputs;
    tiles.rows_per_subgroup = shape.rows_per_subgroup;
  } else if (shape.gemv_workgroup || shape.gemv_outputs) {
    tiles.rows_outputs = 0;  // a plain-GEMV shape asks for the plain GEMV at every row count
  }
  return tiles;
}

// The kernel for m rows: `path` itself unless Auto. Weights outside a texel view (a view not
// taken from a Tensor) take the portable kernels instead of the broadcast one.
MatmulPath resolve_path(Context& ctx, const MatmulTiles& tiles, MatmulPath path, int64_t m, int64_t k,
                        const TensorView& w) {
  if (path != MatmulPath::Auto) return path;
  path = choose_matmul_path(ctx, m, k, w.dtype);
  if (path == MatmulPath::Broadcast && !texel_readable(w))
    path = m <= tiles.gemv_max_rows && ctx.caps().subgroup_reduce ? MatmulPath::Gemv : MatmulPath::Gemm;
  return path;
}

bool has(const TensorView& v) { return v.buffer != VK_NULL_HANDLE; }

constexpr int64_t kRopeKvFoldMaxRows = 8;

// Which parts of f the kernel `path` folds in for m rows. The row-block GEMV leaves the gate out:
// it would recompute silu for a window's rows in every workgroup. The norm needs subgroup sums.
MatmulFolds folds_of(Context& ctx, const MatmulTiles& tiles, MatmulPath path, int64_t m, const MatmulFusion& f) {
  if (ctx.options().disable_matmul_folds) return {};
  const bool rows_kernel = path == MatmulPath::Gemv && takes_rows_kernel(tiles, static_cast<uint32_t>(m));
  const bool norm_ok = !has(f.norm_weight) || (f.norm_weight.dtype == DType::F32 && ctx.caps().subgroup_reduce);
  MatmulFolds folds;
  if (path == MatmulPath::Broadcast) {
    folds = {norm_ok, true};
  } else if (path == MatmulPath::Gemv) {
    folds = {norm_ok && !(rows_kernel && f.swiglu), true};
  } else if (path == MatmulPath::Gemm) {
    folds = {false, true};
  }  // the cooperative-matrix kernel folds nothing
  if (!f.swiglu && !has(f.norm_weight)) folds.prologue = false;
  if (!f.accumulate) folds.epilogue = false;
  // RoPE's pairs sit in one workgroup of the plain GEMV (its outputs per workgroup are even), for
  // decoding rows, where a GPU's step is bound by dispatch latency. Not in the broadcast kernel:
  // on lavapipe the fold bought no time measurable there and cost compiled code (27 MiB of RSS
  // with scd-mc's small windows, 100 MiB with a window's rows; docs/perf.md).
  folds.rope_kv = f.rope_kv.heads > 0 && m <= kRopeKvFoldMaxRows && path == MatmulPath::Gemv && !rows_kernel &&
                  tiles.gemv_outputs % 2 == 0;
  return folds;
}

// Validates y = x' w^T for x' [M, K] (x itself is [M, 2K] when fold.swiglu) and records it with
// the kernel `path` (not Auto), folding in what `fold` asks.
void record_matmul(CommandStream& s, const TensorView& x, const TensorView& w, const TensorView& y, MatmulPath path,
                   const MatmulTiles& tiles, Fold fold) {
  const char* op = fold.swiglu ? "matmul_swiglu" : "matmul";
  // Every check below names the shapes when it fails (built only then).
  const auto shapes = [&] { return shapes_of(x, w, y); };
  require(x.shape.rank == 2 && w.shape.rank == 2 && y.shape.rank == 2, op,
          [&] { return "x [M, K], w [N, K] and y [M, N] must be 2-D: " + shapes(); });
  require(x.dtype == DType::F32 && y.dtype == DType::F32 && (w.dtype == DType::F16 || w.dtype == DType::F32), op,
          [&] { return "x and y must be f32, w f16 or f32: " + shapes(); });
  const int64_t M = x.shape[0], K = w.shape[1], N = w.shape[0];
  require(x.shape[1] == (fold.swiglu ? 2 * K : K) && y.shape[0] == M && y.shape[1] == N, op,
          [&] { return "shapes do not match: " + shapes(); });
  require(M > 0 && N > 0 && K > 0, op, [&] { return "empty matrix: " + shapes(); });
  require(M <= UINT32_MAX / 4 && N <= UINT32_MAX / 4 && K <= UINT32_MAX / 8, op,
          [&] { return "too large: " + shapes(); });
  require(!overlap(y, x) && !overlap(y, w), op, [&] { return "y must not overlap x or w: " + shapes(); });

  Context& ctx = s.context();
  const DeviceCaps& caps = ctx.caps();
  // Decided once for all of M, so every chunk below takes the same kernel.
  const bool rows_kernel =
      path == MatmulPath::Gemv && takes_rows_kernel(tiles, static_cast<uint32_t>(fold.plan_rows ? fold.plan_rows : M));
  require(matmul_path_supported(ctx, path, M, K, w.dtype) && (path != MatmulPath::Broadcast || texel_readable(w)), op,
          [&] {
            return std::string("the ") + matmul_path_name(path) + " kernel cannot run this on " + caps.name + ": " +
                   shapes();
          });
  if (!fold.norm) fold.g = x;  // any view: the shader declares the binding either way

  const bool f16 = w.dtype == DType::F16;
  const uint64_t w_row = static_cast<uint64_t>(K) * dtype_size(w.dtype);
  const uint64_t x_row = static_cast<uint64_t>(fold.swiglu ? 2 * K : K) * 4;
  int64_t n_step = rows_per_dispatch(N, {w_row}, caps);
  if (fold.rope && n_step < N) n_step -= n_step % 2;  // RoPE's pairs stay in one dispatch
  int64_t m_step = rows_per_dispatch(M, {x_row, static_cast<uint64_t>(N) * 4}, caps);
  // The plain GEMV keeps every row's sums in registers; the row-block kernel loops over blocks.
  if (path == MatmulPath::Gemv && !rows_kernel) m_step = std::min<int64_t>(m_step, kGemvMaxRows);
  for (int64_t m0 = 0; m0 < M; m0 += m_step) {
    const int64_t mc = std::min(m_step, M - m0);
    for (int64_t n0 = 0; n0 < N; n0 += n_step) {
      const int64_t nc = std::min(n_step, N - n0);
      const Dispatch d{x.rows(m0, mc),
                       w.rows(n0, nc),
                       y.rows(m0, mc),
                       static_cast<uint32_t>(mc),
                       static_cast<uint32_t>(nc),
                       static_cast<uint32_t>(K),
                       static_cast<uint32_t>(N),
                       static_cast<uint32_t>(n0),
                       f16,
                       fold,
                       static_cast<uint32_t>(m0)};
      switch (path) {
        case MatmulPath::Gemv: rows_kernel ? record_gemv_rows(s, d, tiles) : record_gemv(s, d, tiles); break;
        case MatmulPath::CoopMat: record_coopmat(s, d, tiles); break;
        case MatmulPath::Broadcast: record_broadcast(s, d, tiles); break;
        default: record_gemm(s, d, tiles); break;
      }
    }
  }
}

}  // namespace

void matmul(CommandStream& s, const TensorView& x, const TensorView& w, const TensorView& y, MatmulPath path) {
  const MatmulTiles tiles = tiles_of(s.context());
  const int64_t m = x.shape.rank == 2 ? x.shape[0] : 0, k = w.shape.rank == 2 ? w.shape[1] : 0;
  record_matmul(s, x, w, y, resolve_path(s.context(), tiles, path, m, k, w), tiles, {});
}

void matmul_with_shape(CommandStream& s, const TensorView& x, const TensorView& w, const TensorView& y, MatmulPath path,
                       const MatmulShape& shape) {
  require(shape.gemv_outputs <= 16, "matmul",
          [&] { return "at most 16 GEMV outputs per workgroup, got " + std::to_string(shape.gemv_outputs); });
  require(shape.rows_outputs <= 16 && shape.rows_per_subgroup <= 16, "matmul", [&] {
    return "at most 16 row-block outputs and rows per subgroup, got " + std::to_string(shape.rows_outputs) + " and " +
           std::to_string(shape.rows_per_subgroup);
  });
  require(shape.coop_bk % 16 == 0 && shape.coop_bk <= 128, "matmul", [&] {
    return "the cooperative-matrix slice must be a multiple of 16 up to 128, got " + std::to_string(shape.coop_bk);
  });
  const MatmulTiles tiles = tiles_with(s.context(), shape);
  const int64_t m = x.shape.rank == 2 ? x.shape[0] : 0, k = w.shape.rank == 2 ? w.shape[1] : 0;
  record_matmul(s, x, w, y, resolve_path(s.context(), tiles, path, m, k, w), tiles, {});
}

MatmulFolds matmul_folds(Context& ctx, int64_t m, const TensorView& w, const MatmulFusion& f, MatmulPath path) {
  if (w.shape.rank != 2 || m <= 0) return {};
  const MatmulTiles tiles = tiles_of(ctx);
  return folds_of(ctx, tiles, resolve_path(ctx, tiles, path, m, w.shape[1], w), m, f);
}

void matmul_fused(CommandStream& s, const TensorView& x, const TensorView& w, const TensorView& y,
                  const MatmulFusion& f, MatmulPath path) {
  const char* op = "matmul_fused";
  require(x.shape.rank == 2 && w.shape.rank == 2, op,
          [&] { return "x and w must be 2-D: x " + x.shape.str() + ", w " + w.shape.str(); });
  const int64_t M = x.shape[0], K = w.shape[1];
  require(!(f.swiglu && has(f.norm_weight)), op, "one prologue at a time: the gate or the norm");
  const bool rope = f.rope_kv.heads > 0;
  require(!(rope && f.accumulate), op, "one epilogue at a time: the residual add or RoPE and the cache write");
  if (has(f.norm_weight))
    require(f.norm_weight.shape.rank == 1 && f.norm_weight.shape[0] == K, op, [&] {
      return "the norm's weight must be [K] = [" + std::to_string(K) + "], got " + f.norm_weight.shape.str();
    });
  Context& ctx = s.context();
  const MatmulTiles tiles = tiles_of(ctx);
  const int64_t plan_rows = f.rows_per_image > 0 ? f.rows_per_image : M;
  path = resolve_path(ctx, tiles, path, plan_rows, K, w);
  MatmulFolds folds = folds_of(ctx, tiles, path, plan_rows, f);
  if (M > kRopeKvFoldMaxRows) folds.rope_kv = false;  // the fold's rows limit is the dispatch's (same bits unfolded)

  TensorView xin = x;
  const bool prologue = f.swiglu || has(f.norm_weight);
  if (prologue && !folds.prologue) {
    require(has(f.x_scratch), op, "the prologue is not folded here and needs x_scratch");
    if (f.swiglu)
      swiglu_fused(s, x, f.x_scratch);
    else
      rms_norm(s, x, f.norm_weight, f.x_scratch, f.norm_eps);
    xin = f.x_scratch;
  }
  const bool add_after = f.accumulate && !folds.epilogue;
  require(!add_after || has(f.y_scratch), op, "the residual add is not folded here and needs y_scratch");
  Fold fold;
  fold.swiglu = f.swiglu && folds.prologue;
  fold.norm = has(f.norm_weight) && folds.prologue;
  fold.accumulate = folds.epilogue;
  fold.g = f.norm_weight;
  fold.eps = f.norm_eps;
  fold.plan_rows = plan_rows;
  Rope2dKvWrite rope_kv;
  if (rope) {
    const MatmulFusion::RopeKv& r = f.rope_kv;
    const int64_t D = r.heads * r.head_dim;
    require(w.shape[0] == 3 * D, op, [&] {
      return "RoPE and the cache write need the q|k|v projection: w " + w.shape.str() + " has not 3 x " +
             std::to_string(r.heads) + " heads x " + std::to_string(r.head_dim) + " rows";
    });
    rope_kv = {HeadRows::columns(y, 0, r.heads, r.head_dim),
               HeadRows::columns(y, D, r.heads, r.head_dim),
               HeadRows::columns(y, 2 * D, r.heads, r.head_dim),
               r.batch,
               r.positions,
               r.table,
               r.slots,
               r.k_cache,
               r.v_cache};
    // Unfolded, rope_2d_kv_write below checks its arguments itself: once per layer, not twice.
    if (folds.rope_kv) {
      fold.rope = &r;
      fold.rope_layout = check_rope_2d_kv_write(op, rope_kv);
    }
  }
  record_matmul(s, xin, w, add_after ? f.y_scratch : y, path, tiles, fold);
  if (add_after) add(s, y, f.y_scratch, y);
  if (rope && !folds.rope_kv) rope_2d_kv_write(s, rope_kv);
}

}  // namespace vkspec::ops
