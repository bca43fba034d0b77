#include <algorithm>
#include <cmath>
#include <string>

#include "engine/checks/op_check.h"
#include "engine/ops/matmul.h"
#include "engine/ref/matmul_ref.h"
#include "engine/ref/rms_norm_ref.h"
#include "engine/ref/swiglu_ref.h"

namespace vkspec {
namespace {

using ops::MatmulPath;

// path Auto: the device's choice. shape: a kernel shape other than the device's table row
// (bench-ops' matmul-sweep times these; here they must compute the same product).
CheckResult check_matmul(Context& ctx, int64_t m, int64_t n, int64_t k, DType wt, MatmulPath path,
                         const ops::MatmulShape& sh = {}) {
  std::string shape =
      "M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) + " w " + dtype_name(wt);
  if (sh.gemv_workgroup || sh.gemv_outputs)
    shape = "wg " + std::to_string(sh.gemv_workgroup) + " rows " + std::to_string(sh.gemv_outputs) + " " + shape;
  if (sh.coop_bk) shape = "bk " + std::to_string(sh.coop_bk) + " " + shape;
  if (sh.rows_outputs)
    shape = "r" + std::to_string(sh.rows_outputs) + " mg" + std::to_string(sh.rows_per_subgroup) + " " + shape;
  // A forced kernel this device cannot run has nothing to compare; auto cases cover the device.
  if (!ops::matmul_path_supported(ctx, path, m, k, wt) || sh.gemv_workgroup > ctx.caps().max_workgroup_invocations)
    return CheckResult::skip(std::string(ops::matmul_path_name(path)) + " kernel not available here, " + shape);
  const auto x = random_floats(static_cast<size_t>(m * k), 11);
  auto w = random_floats(static_cast<size_t>(n * k), 12);
  Tensor tx = upload_floats(ctx, x, DType::F32, {m, k}, "x");
  Tensor tw = upload_floats(ctx, w, wt, {n, k}, "w");
  Tensor ty = ctx.tensor(DType::F32, {m, n}, "y");
  // The GPU reads f16 weights exactly, so the reference gets the same values and what remains is
  // accumulation error (plus, on the cooperative-matrix path, fp16 rounding of x).
  if (wt == DType::F16) w = round_to_half(w);
  const MatmulPath taken = path == MatmulPath::Auto ? ops::choose_matmul_path(ctx, m, k, wt) : path;
  CommandStream s(ctx);
  ops::matmul_with_shape(s, tx, tw, ty, path, sh);
  s.submit_and_wait();
  // f32 rounding in a K-long accumulation grows like sqrt(K).
  const double tol = (taken == MatmulPath::CoopMat ? 2e-3 : 2e-6) * std::max(1.0, std::sqrt(k / 1024.0));
  return {normalised_error(download_floats(ctx, ty), ref::matmul(x, w, m, n, k)), tol,
          std::string(ops::matmul_path_name(taken)) + " " + shape};
}

// The FFN's gate and down projection in one call: fused into the matmul where the broadcast kernel
// runs, swiglu_fused + matmul elsewhere; either way against the references of both.
CheckResult check_matmul_swiglu(Context& ctx, int64_t m, int64_t n, int64_t k, DType wt) {
  const auto a = random_floats(static_cast<size_t>(m * k), 13), b = random_floats(static_cast<size_t>(m * k), 14);
  std::vector<float> ab(static_cast<size_t>(m * 2 * k));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t j = 0; j < k; ++j) {
      ab[static_cast<size_t>(r * 2 * k + j)] = a[static_cast<size_t>(r * k + j)];
      ab[static_cast<size_t>(r * 2 * k + k + j)] = b[static_cast<size_t>(r * k + j)];
    }
  auto w = random_floats(static_cast<size_t>(n * k), 15);
  Tensor tab = upload_floats(ctx, ab, DType::F32, {m, 2 * k}, "ab");
  Tensor tw = upload_floats(ctx, w, wt, {n, k}, "w");
  Tensor ty = ctx.tensor(DType::F32, {m, n}, "y"), hidden = ctx.tensor(DType::F32, {m, k}, "hidden");
  if (wt == DType::F16) w = round_to_half(w);
  ops::MatmulFusion f;
  f.swiglu = true;
  f.x_scratch = hidden;
  const bool fused = ops::matmul_folds(ctx, m, tw, f).prologue;
  CommandStream s(ctx);
  ops::matmul_fused(s, tab, tw, ty, f);
  s.submit_and_wait();
  // Unfused, the matmul is whichever kernel auto picks: the cooperative-matrix one rounds the
  // activations to fp16 (its tolerance in check_matmul).
  const bool coopmat = !fused && ops::choose_matmul_path(ctx, m, k, wt) == MatmulPath::CoopMat;
  const double tol = (coopmat ? 2e-3 : 2e-6) * std::max(1.0, std::sqrt(k / 1024.0));
  return {normalised_error(download_floats(ctx, ty), ref::matmul(ref::swiglu(a, b), w, m, n, k)), tol,
          std::string(fused ? "fused" : "swiglu + matmul") + " M=" + std::to_string(m) + " N=" + std::to_string(n) +
              " K=" + std::to_string(k) + " w " + dtype_name(wt)};
}

// A projection with its norm before it or its residual add after it (ops::MatmulFusion), on the
// kernel `path` or the device's choice: folded where that kernel can, on their own dispatches where
// it cannot, against rms_norm's and add's references. The folded norm scales a row after its sums,
// so it differs from the reference by rounding only. (The row-block GEMV runs these at 9+ rows
// under VKSPEC_GPU_KERNELS, which CI's cli.selftest_gpu_kernels sets.)
CheckResult check_matmul_fused(Context& ctx, int64_t m, int64_t n, int64_t k, DType wt, bool norm, MatmulPath path) {
  std::string what = std::string(norm ? "norm" : "residual") + " " + ops::matmul_path_name(path) +
                     " M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) + " w " +
                     dtype_name(wt);
  if (!ops::matmul_path_supported(ctx, path, m, k, wt)) return CheckResult::skip("kernel not available here, " + what);
  auto x = random_floats(static_cast<size_t>(m * k), 16);
  for (int64_t j = 0; j < k; ++j) x[static_cast<size_t>(j)] *= 100.0f;  // a row far from unit scale
  const auto g = random_floats(static_cast<size_t>(k), 17), y0 = random_floats(static_cast<size_t>(m * n), 18);
  auto w = random_floats(static_cast<size_t>(n * k), 19);
  Tensor tx = upload_floats(ctx, x, DType::F32, {m, k}, "x");
  Tensor tw = upload_floats(ctx, w, wt, {n, k}, "w");
  Tensor tg = upload_floats(ctx, g, DType::F32, {k}, "norm weight");
  Tensor ty = upload_floats(ctx, y0, DType::F32, {m, n}, "y");
  Tensor xs = ctx.tensor(DType::F32, {m, k}, "x scratch"), ys = ctx.tensor(DType::F32, {m, n}, "y scratch");
  if (wt == DType::F16) w = round_to_half(w);
  ops::MatmulFusion f;
  if (norm) f.norm_weight = tg;
  f.accumulate = !norm;
  f.x_scratch = xs;
  f.y_scratch = ys;
  const ops::MatmulFolds folds = ops::matmul_folds(ctx, m, tw, f, path);
  CommandStream s(ctx);
  ops::matmul_fused(s, tx, tw, ty, f, path);
  s.submit_and_wait();
  std::vector<float> want;
  if (norm) {
    want = ref::matmul(ref::rms_norm(x, g, 1e-5f), w, m, n, k);
  } else {
    want = ref::matmul(x, w, m, n, k);
    for (size_t i = 0; i < want.size(); ++i) want[i] += y0[i];
  }
  const bool coopmat = (norm ? !folds.prologue : !folds.epilogue) &&
                       (path == MatmulPath::CoopMat ||
                        (path == MatmulPath::Auto && ops::choose_matmul_path(ctx, m, k, wt) == MatmulPath::CoopMat));
  const double tol = (coopmat ? 2e-3 : 4e-6) * std::max(1.0, std::sqrt(k / 1024.0));
  return {normalised_error(download_floats(ctx, ty), want), tol,
          std::string(folds.prologue || folds.epilogue ? "folded " : "own dispatches ") + what};
}

struct Shape3 {
  int64_t m, n, k;
};

// Checks named "KIND DTYPE MxNxK"; shape: a kernel shape other than the table's.
void register_cases(const std::string& kind, MatmulPath path, std::initializer_list<Shape3> shapes,
                    const ops::MatmulShape& shape = {},
                    std::initializer_list<DType> dtypes = {DType::F16, DType::F32}) {
  for (const Shape3& s : shapes)
    for (DType wt : dtypes)
      RegisterOpCheck("matmul",
                      kind + " " + dtype_name(wt) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                          std::to_string(s.k),
                      [s, wt, path, shape](Context& c) { return check_matmul(c, s.m, s.n, s.k, wt, path, shape); });
}

// Each kernel at shapes that reach its edges: whatever the device picks, then each one forced.
void register_kernel_checks() {
  // Whatever the device picks. Odd sizes leave partial tiles; K that is no multiple of 4 or 8
  // takes unvectorised loads (and other kernels where one needs alignment); odd K with f16
  // weights starts rows mid-word.
  register_cases("auto", MatmulPath::Auto,
                 {{1, 1, 1},
                  {1, 768, 768},
                  {2, 2304, 768},
                  {3, 1000, 77},
                  {5, 100, 36},
                  {7, 33, 38},
                  {8, 513, 1031},
                  {17, 300, 129},
                  {33, 65, 36},
                  {64, 768, 768},
                  {257, 1024, 256},
                  {1024, 1024, 1024}});
  // Each kernel on its own, so every one that the device has is checked whatever auto picks.
  // Past 8 rows the pipeline is built for the next multiple of 8 (13 -> 16, 34 -> 40): the extra
  // rows must neither be written nor read past x; past 64 rows one dispatch per 64 (130: 3). The
  // 64-row case's K is the 130-row case's vector width (8): lavapipe spends 5-20 s of CPU compiling
  // a 64-row pipeline at each subgroup size CI checks, and the 4-wide loads are the 5-row case's.
  register_cases("gemv", MatmulPath::Gemv,
                 {{1, 1, 1},
                  {1, 768, 768},
                  {2, 2304, 768},
                  {3, 1000, 77},
                  {5, 100, 36},
                  {8, 513, 1031},
                  {13, 300, 129},
                  {34, 256, 768},
                  {64, 65, 72},
                  {130, 96, 72}});
  register_cases(
      "gemm", MatmulPath::Gemm,
      {{1, 1, 1}, {3, 1000, 77}, {8, 513, 1031}, {17, 300, 129}, {33, 65, 36}, {64, 768, 768}, {257, 1024, 256}});
  for (const auto& [wg, rows] : std::initializer_list<std::pair<uint32_t, uint32_t>>{{32, 8}, {256, 1}, {64, 4}})
    register_cases("gemv wg" + std::to_string(wg) + " r" + std::to_string(rows), MatmulPath::Gemv, {{2, 301, 136}},
                   {wg, rows, 0}, {DType::F16});
  // A plain-GEMV shape at window rows: the plain kernel even where the table takes the row-block one.
  register_cases("gemv wg64 r4", MatmulPath::Gemv, {{18, 301, 136}}, {64, 4, 0}, {DType::F16});
  // The row-block GEMV at shapes a table may choose, on every device (forced): partial blocks of
  // rows and of weight rows, each vector width, more blocks than a workgroup has subgroups (130
  // rows one per subgroup: the loop over blocks), fewer weight rows than one workgroup's.
  for (const auto& [r, mg] : std::initializer_list<std::pair<uint32_t, uint32_t>>{{8, 4}, {4, 8}, {16, 2}, {3, 5}})
    register_cases("rows r" + std::to_string(r) + " mg" + std::to_string(mg), MatmulPath::Gemv,
                   {{9, 300, 136}, {34, 256, 768}, {13, 65, 36}, {40, 33, 77}}, {0, 0, 0, r, mg});
  register_cases("rows r2 mg1", MatmulPath::Gemv, {{130, 96, 72}}, {0, 0, 0, 2, 1}, {DType::F16});
  register_cases("rows r8 mg4", MatmulPath::Gemv, {{9, 3, 20}}, {0, 0, 0, 8, 4}, {DType::F32});
  // K a multiple of 8 so f16 weights run too; M = 9, 34 and 40 take the 12- and 8-row tiles.
  register_cases("broadcast", MatmulPath::Broadcast,
                 {{1, 1, 8},
                  {3, 1000, 72},
                  {8, 513, 1032},
                  {9, 300, 136},
                  {17, 130, 40},
                  {34, 768, 256},
                  {40, 65, 1000},
                  {257, 1024, 256}});
  register_cases("coopmat", MatmulPath::CoopMat, {{17, 300, 129}, {64, 768, 768}, {257, 1024, 256}});
  // Every K slice the table may choose, with K not a multiple of it (a partial last slice) and
  // K not a multiple of 4 (element loads).
  for (uint32_t bk : {16u, 32u, 128u})
    register_cases("coopmat bk" + std::to_string(bk), MatmulPath::CoopMat, {{34, 300, 200}, {17, 65, 129}}, {0, 0, bk},
                   {DType::F16});
}

// The fused forms: the FFN's gate with its down projection, and the norm before a projection and
// the residual add after it.
void register_fused_checks() {
  for (const Shape3& sh :
       std::initializer_list<Shape3>{{2, 256, 768}, {34, 256, 768}, {5, 40, 72}, {3, 10, 36}, {2, 10, 37}})
    for (DType wt : {DType::F16, DType::F32})
      RegisterOpCheck("matmul",
                      std::string("swiglu ") + dtype_name(wt) + " " + std::to_string(sh.m) + "x" +
                          std::to_string(sh.n) + "x" + std::to_string(sh.k),
                      [sh, wt](Context& c) { return check_matmul_swiglu(c, sh.m, sh.n, sh.k, wt); });
  // The norm before a projection and the residual add after it, on each kernel: folded by the
  // broadcast kernel, the plain and the row-block GEMV (and the add by the tiled one), their own
  // dispatches elsewhere. Shapes: decoding rows, a window's, K no multiple of 4 (element loads).
  for (bool norm : {true, false})
    for (MatmulPath path :
         {MatmulPath::Auto, MatmulPath::Broadcast, MatmulPath::Gemv, MatmulPath::Gemm, MatmulPath::CoopMat})
      for (const Shape3& sh : std::initializer_list<Shape3>{{2, 300, 256}, {34, 768, 256}, {13, 65, 40}, {9, 33, 38}})
        for (DType wt : {DType::F16, DType::F32}) {
          if (path == MatmulPath::Broadcast && sh.k % 8) continue;
          RegisterOpCheck("matmul",
                          std::string(norm ? "norm " : "residual ") + ops::matmul_path_name(path) + " " +
                              dtype_name(wt) + " " + std::to_string(sh.m) + "x" + std::to_string(sh.n) + "x" +
                              std::to_string(sh.k),
                          [=](Context& c) { return check_matmul_fused(c, sh.m, sh.n, sh.k, wt, norm, path); });
        }
}

struct Register {
  Register() {
    register_kernel_checks();
    register_fused_checks();
    // Weights over maxStorageBufferRange are split into several dispatches (134 MB against 128 MiB
    // on lavapipe; capped at 512 MiB of weights where the range is larger).
    RegisterOpCheck("matmul", "split f32 weights over the binding range", [](Context& c) {
      const int64_t k = 4096;
      const uint64_t range = std::min<uint64_t>(c.caps().max_storage_buffer_range, 512ull << 20);
      return check_matmul(c, 2, static_cast<int64_t>(range / (k * 4)) + 3, k, DType::F32, MatmulPath::Auto);
    });
  }
} register_matmul_checks;

}  // namespace
}  // namespace vkspec
