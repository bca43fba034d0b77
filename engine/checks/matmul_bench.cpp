// matmul at the shapes the model runs: GEMV for decoding (1 row, or 2 with classifier-free
// guidance) and GEMM for prefill / verification windows, next to OpenBLAS on the same machine.
// A few rows force a kernel that the device would not pick, to show what the choice is worth.
#include <string>
#include <utility>

#include "engine/checks/op_bench.h"
#include "engine/ops/matmul.h"
#include "engine/ref/matmul_ref.h"

namespace vkspec {
namespace {

using ops::MatmulPath;

BenchResult bench_matmul(Context& ctx, int repeat, int64_t m, int64_t n, int64_t k, DType wt, MatmulPath path,
                         const ops::MatmulShape& shape = {}) {
  const auto x = random_floats(static_cast<size_t>(m * k), 21);
  const auto w = random_floats(static_cast<size_t>(n * k), 22);
  Tensor tx = upload_floats(ctx, x, DType::F32, {m, k}, "x");
  Tensor tw = upload_floats(ctx, w, wt, {n, k}, "w");
  Tensor ty = ctx.tensor(DType::F32, {m, n}, "y");
  BenchResult r;
  r.kernel = ops::matmul_path_name(path == MatmulPath::Auto ? ops::choose_matmul_path(ctx, m, k, wt) : path);
  r.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  r.bytes = static_cast<double>(tx.bytes() + tw.bytes() + ty.bytes());
  r.gpu_ms = median_gpu_ms(
      ctx, repeat, [&](CommandStream& s) { ops::matmul_with_shape(s, tx, tw, ty, path, shape); },
      &r.gpu_process_cpu_ms);
  // OpenBLAS has no f16 GEMM; it gets the same values as f32 (so it reads twice the weight bytes).
  std::vector<float> y(static_cast<size_t>(m * n));
  r.cpu = wt == DType::F16 ? "OpenBLAS sgemm, f32 weights" : "OpenBLAS sgemm";
  r.cpu_ms = median_cpu_ms(repeat, [&] { ref::matmul_blas(x.data(), w.data(), y.data(), m, n, k); });
  return r;
}

// What a projection folds in (ops::MatmulFusion) at one LlamaGen block's shapes: its time against
// the plain product's in the same run is what folding costs the kernel, against the plain
// product plus its neighbours' dispatches (rms_norm, add, swiglu) what it saves.
enum class Fused { Plain, Norm, Accumulate, GateAccumulate };

BenchResult bench_matmul_fused(Context& ctx, int repeat, int64_t m, int64_t n, int64_t k, Fused kind) {
  const int64_t xk = kind == Fused::GateAccumulate ? 2 * k : k;
  Tensor tx = upload_floats(ctx, random_floats(static_cast<size_t>(m * xk), 23), DType::F32, {m, xk}, "x");
  Tensor tw = upload_floats(ctx, random_floats(static_cast<size_t>(n * k), 24), DType::F16, {n, k}, "w");
  Tensor tg = upload_floats(ctx, random_floats(static_cast<size_t>(k), 25), DType::F32, {k}, "norm weight");
  Tensor ty = ctx.tensor(DType::F32, {m, n}, "y"), x_scratch = ctx.tensor(DType::F32, {m, k}, "x scratch");
  Tensor y_scratch = ctx.tensor(DType::F32, {m, n}, "y scratch");
  ops::MatmulFusion f;
  if (kind == Fused::Norm) f.norm_weight = tg;
  f.swiglu = kind == Fused::GateAccumulate;
  f.accumulate = kind == Fused::Accumulate || kind == Fused::GateAccumulate;
  f.x_scratch = x_scratch;
  f.y_scratch = y_scratch;
  const ops::MatmulFolds folds = ops::matmul_folds(ctx, m, tw, f);
  BenchResult r;
  r.kernel = std::string(ops::matmul_path_name(ops::choose_matmul_path(ctx, m, k, DType::F16))) +
             (kind == Fused::Plain               ? ""
              : folds.prologue || folds.epilogue ? " folded"
                                                 : " + own dispatches");
  r.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  r.bytes = static_cast<double>(tx.bytes() + tw.bytes() + ty.bytes() * (f.accumulate ? 2 : 1));
  r.gpu_ms = median_gpu_ms(
      ctx, repeat, [&](CommandStream& s) { ops::matmul_fused(s, tx, tw, ty, f); }, &r.gpu_process_cpu_ms);
  return r;
}

void add(int64_t m, int64_t n, int64_t k, DType wt, MatmulPath path = MatmulPath::Auto, const char* op = "matmul") {
  std::string name =
      std::string(dtype_name(wt)) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  if (path != MatmulPath::Auto) name += std::string(" ") + ops::matmul_path_name(path);
  RegisterOpBench(op, name, [=](Context& c, int repeat) { return bench_matmul(c, repeat, m, n, k, wt, path); });
}

// Decoding: a 4096 x 4096 projection, and a GPT-B-sized (768 wide) attention and MLP layer for a
// conditional + unconditional pair. Then prefill-sized and square GEMMs, and the kernels every
// device has on shapes where another kernel may be chosen.
void register_plain_shapes() {
  for (DType wt : {DType::F16, DType::F32}) {
    add(1, 4096, 4096, wt);
    add(2, 2304, 768, wt);
    add(2, 768, 3072, wt);
    add(32, 768, 768, wt);
    add(64, 2048, 768, wt);
    add(1024, 1024, 1024, wt);
  }
  add(1, 4096, 4096, DType::F16, MatmulPath::Gemv);
  add(256, 768, 768, DType::F16);
  add(256, 768, 768, DType::F16, MatmulPath::Gemm);
}

// matmul-fused: the shipped GPT's projections (dim 256, FFN 768) for an AR step (2 rows with CFG)
// and a window-16 verification forward (34): q|k|v and w1|w3 after their norms, the output
// projection and w2 (after the gate) into the residual.
void register_fused() {
  struct F {
    int64_t n, k;
    Fused kind;
    const char* what;
  };
  for (int64_t m : {2, 34})
    for (const F& f : {F{768, 256, Fused::Plain, "qkv"}, F{768, 256, Fused::Norm, "qkv + norm"},
                       F{256, 256, Fused::Plain, "wo"}, F{256, 256, Fused::Accumulate, "wo + residual"},
                       F{256, 768, Fused::Plain, "w2"}, F{256, 768, Fused::GateAccumulate, "w2 + gate + residual"}})
      RegisterOpBench("matmul-fused",
                      std::string("f16 ") + std::to_string(m) + "x" + std::to_string(f.n) + "x" + std::to_string(f.k) +
                          " " + f.what,
                      [=](Context& c, int repeat) { return bench_matmul_fused(c, repeat, m, f.n, f.k, f.kind); });
}

// A projection's output and input widths.
struct Projection {
  int64_t n, k;
};
// The shipped model's, LlamaGen-B's and -XL's q|k|v; LlamaGen-XL's q|k|v and w2.
constexpr Projection kSweepProjections[] = {{768, 256}, {2304, 768}, {3840, 1280}};
constexpr Projection kXlProjections[] = {{3840, 1280}, {1280, 3456}};

std::string sweep_shape(int64_t m, const Projection& pr) {
  return "f16 " + std::to_string(m) + "x" + std::to_string(pr.n) + "x" + std::to_string(pr.k);
}

// matmul-sweep (run only when named): where GEMV stops paying against the tiled kernels, at
// verification-window rows (window + 1, times 2 for CFG).
void register_path_sweep() {
  for (const Projection& pr : kSweepProjections)
    for (int64_t m : {10, 18, 34, 66, 130})
      for (MatmulPath path : {MatmulPath::Gemv, MatmulPath::Gemm, MatmulPath::CoopMat})
        add(m, pr.n, pr.k, DType::F16, path, "matmul-sweep");
}

// The plain GEMV's own shape on LlamaGen-XL's projections: invocations per workgroup (one
// K-reduction) x weight rows per workgroup, for decoding (2 rows: CFG) and at 18 and 34 rows
// (windows 8 and 16 with CFG, which the row-block kernel takes where the table has it).
void register_gemv_shape_sweep() {
  for (int64_t m : {2, 18, 34})
    for (const Projection& pr : kXlProjections)
      for (uint32_t wg : {32u, 64u, 128u, 256u})
        for (uint32_t rows : {1u, 2u, 4u, 8u}) {
          const int64_t n = pr.n, k = pr.k;
          RegisterOpBench("matmul-sweep",
                          sweep_shape(m, pr) + " gemv wg" + std::to_string(wg) + " r" + std::to_string(rows),
                          [=](Context& c, int repeat) {
                            return bench_matmul(c, repeat, m, n, k, DType::F16, MatmulPath::Gemv, {wg, rows, 0});
                          });
        }
}

// The row-block GEMV's shape (weight rows per workgroup x activation rows per subgroup) at
// windows 8, 16 and 32 with CFG, on the same projections. Timed alone these have disagreed with
// whole forwards on an H200 (docs/perf.md); `bench --synthetic` with VKSPEC_GEMV_ROWS_TILE
// decides the table.
void register_row_block_sweep() {
  for (int64_t m : {18, 34, 66})
    for (const Projection& pr : kXlProjections)
      for (const auto& [r, mg] :
           std::initializer_list<std::pair<uint32_t, uint32_t>>{{4, 4}, {4, 8}, {8, 4}, {8, 8}, {16, 4}}) {
        const int64_t n = pr.n, k = pr.k;
        RegisterOpBench("matmul-sweep", sweep_shape(m, pr) + " rows r" + std::to_string(r) + " mg" + std::to_string(mg),
                        [=](Context& c, int repeat) {
                          return bench_matmul(c, repeat, m, n, k, DType::F16, MatmulPath::Gemv, {0, 0, 0, r, mg});
                        });
      }
}

// The cooperative-matrix kernel's K slice at verification-window rows (34: window 16 with CFG).
void register_coopmat_sweep() {
  for (const Projection& pr : {Projection{2304, 768}, Projection{3840, 1280}})
    for (int64_t m : {34, 66})
      for (uint32_t bk : {16u, 32u, 64u, 128u}) {
        const int64_t n = pr.n, k = pr.k;
        RegisterOpBench("matmul-sweep", sweep_shape(m, pr) + " coopmat bk" + std::to_string(bk),
                        [=](Context& c, int repeat) {
                          return bench_matmul(c, repeat, m, n, k, DType::F16, MatmulPath::CoopMat, {0, 0, bk});
                        });
      }
}

struct Register {
  Register() {
    register_plain_shapes();
    register_fused();
    register_path_sweep();
    register_gemv_shape_sweep();
    register_row_block_sweep();
    register_coopmat_sweep();
  }
} register_matmul_benches;

}  // namespace
}  // namespace vkspec
