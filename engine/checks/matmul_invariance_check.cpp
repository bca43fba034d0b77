// Batch invariance of the matmul kernels (ops::MatmulFusion::rows_per_image): an image's rows give
// the same bits alone, with fewer rows than the plan (a window shrinking at the image's end), and
// at any offset among other images' rows (a batch of padded lanes), whatever kernel the plan picks
// on this device. Decoding several images per forward relies on it (docs/methods.md, --batch).
#include <cstring>

#include "engine/checks/op_check.h"
#include "engine/ops/matmul.h"

namespace vkspec {
namespace {

// The product: the plan's rows per image, the weights' shape and dtype, and which fold it carries.
struct Product {
  int64_t plan, n, k;
  DType wt;
  bool norm;  // the norm before it, else the residual add after it
};

// y of `rows` rows of x (the image's first `rows` of the plan's), planned for p.plan rows per
// image; with `before` other rows ahead of them in the same call.
std::vector<float> image_rows(Context& ctx, const Product& p, const std::vector<float>& x, const std::vector<float>& w,
                              int64_t before, int64_t rows) {
  const int64_t n = p.n, k = p.k;
  const DType wt = p.wt;
  const bool norm = p.norm;
  const int64_t m = before + rows;
  std::vector<float> all = random_floats(static_cast<size_t>(before * k), 41);  // the other images
  all.insert(all.end(), x.begin(), x.begin() + rows * k);
  const auto g = random_floats(static_cast<size_t>(k), 42), y0 = random_floats(static_cast<size_t>(m * n), 43);
  Tensor tx = upload_floats(ctx, all, DType::F32, {m, k}, "x");
  Tensor tw = upload_floats(ctx, w, wt, {n, k}, "w");
  Tensor tg = upload_floats(ctx, g, DType::F32, {k}, "norm weight");
  std::vector<float> y_init(static_cast<size_t>(before * n), 0.0f);
  y_init.insert(y_init.end(), y0.begin(), y0.begin() + rows * n);  // the residual the image adds to
  Tensor ty = upload_floats(ctx, y_init, DType::F32, {m, n}, "y");
  Tensor xs = ctx.tensor(DType::F32, {m, k}, "x scratch"), ys = ctx.tensor(DType::F32, {m, n}, "y scratch");
  ops::MatmulFusion f;
  f.rows_per_image = p.plan;
  if (norm) f.norm_weight = tg;
  f.accumulate = !norm;
  f.x_scratch = xs;
  f.y_scratch = ys;
  CommandStream s(ctx);
  ops::matmul_fused(s, tx, tw, ty, f);
  s.submit_and_wait();
  const std::vector<float> y = download_floats(ctx, ty);
  return {y.begin() + before * n, y.end()};
}

// Fraction of the image's outputs whose bits differ between alone (rows of the plan) and the
// batch (the plan's rows after `before` rows of other images).
CheckResult check_invariance(Context& ctx, int64_t plan, int64_t rows, int64_t before, int64_t n, int64_t k, DType wt,
                             bool norm) {
  const auto x = random_floats(static_cast<size_t>(plan * k), 44), w = random_floats(static_cast<size_t>(n * k), 45);
  const Product p{plan, n, k, wt, norm};
  const std::vector<float> alone = image_rows(ctx, p, x, w, 0, rows);
  const std::vector<float> batched = image_rows(ctx, p, x, w, before, plan);
  size_t differ = 0;
  for (size_t i = 0; i < alone.size(); ++i) differ += std::memcmp(&alone[i], &batched[i], sizeof(float)) != 0;
  return {static_cast<double>(differ) / static_cast<double>(alone.size()), 0.0,
          std::string(norm ? "norm" : "residual") + " plan " + std::to_string(plan) + " rows, alone " +
              std::to_string(rows) + ", batched after " + std::to_string(before) + ": N=" + std::to_string(n) +
              " K=" + std::to_string(k) + " w " + dtype_name(wt)};
}

struct Case {
  int64_t plan, rows, before;
};

const struct Register {
  Register() {
    // Plans each kernel takes on some device (2: decoding with CFG; 18 and 34: windows of 9 and
    // 17 queries; 96: a tree), alone with fewer rows, batched at offsets that are no multiple of a
    // row block.
    for (const Case& c :
         {Case{2, 2, 6}, Case{18, 18, 54}, Case{18, 5, 18}, Case{34, 27, 34}, Case{96, 61, 96}, Case{96, 30, 96}})
      for (bool norm : {true, false})
        RegisterOpCheck("matmul_invariance",
                        std::string(norm ? "norm" : "residual") + " plan " + std::to_string(c.plan) + " alone " +
                            std::to_string(c.rows) + " after " + std::to_string(c.before),
                        [c, norm](Context& ctx) {
                          return check_invariance(ctx, c.plan, c.rows, c.before, 256, 256, DType::F16, norm);
                        });
  }
} register_invariance_checks;

}  // namespace
}  // namespace vkspec
