#include "engine/checks/op_check.h"
#include "engine/ops/group_norm.h"
#include "engine/ref/group_norm_ref.h"

namespace vkspec {
namespace {

struct Case {
  int64_t n, h, w, c;
  bool swish = false, in_place = false, tree = false;
  uint32_t workgroup = 0;  // 0: the op's choice
  float offset = 0;        // added to x: a mean large against the spread
};

Case wide(Case c, uint32_t wg) {
  c.workgroup = wg;
  return c;
}

CheckResult check_gn(Context& ctx, const Case& k) {
  const Shape shape{k.n, k.h, k.w, k.c};
  auto x = random_floats(static_cast<size_t>(shape.numel()), 21, -2.0f, 2.0f);
  for (float& v : x) v += k.offset;
  const auto gamma = random_floats(static_cast<size_t>(k.c), 22, 0.5f, 1.5f);
  const auto beta = random_floats(static_cast<size_t>(k.c), 23, -0.5f, 0.5f);
  Tensor tx = upload_floats(ctx, x, DType::F32, shape, "x");
  Tensor tg = upload_floats(ctx, gamma, DType::F32, {k.c}, "gamma"),
         tb = upload_floats(ctx, beta, DType::F32, {k.c}, "beta");
  Tensor ty = k.in_place ? Tensor() : ctx.tensor(DType::F32, shape, "y");
  const Tensor& out = k.in_place ? tx : ty;
  ops::GroupNormParams p;
  p.swish = k.swish;
  ops::GroupNormKernel kern;
  kern.subgroup_reduce = !k.tree;
  kern.workgroup_size = k.workgroup;
  CommandStream s(ctx);
  ops::group_norm(s, tx, tg, tb, out, p, kern);
  s.submit_and_wait();
  const auto want = ref::group_norm(x, gamma, beta, {k.n, k.h * k.w, k.c, 32, 1e-6, k.swish});
  return {normalised_error(download_floats(ctx, out), want), k.offset != 0 ? 2e-5 : 2e-6, "x " + shape.str()};
}

VKSPEC_OP_CHECK("group_norm", "32ch 16x16", [](Context& c) { return check_gn(c, {1, 16, 16, 32}); });
VKSPEC_OP_CHECK("group_norm", "64ch 33x33 swish", [](Context& c) { return check_gn(c, {1, 33, 33, 64, true}); });
VKSPEC_OP_CHECK("group_norm", "96ch 7x5 n2 swish", [](Context& c) { return check_gn(c, {2, 7, 5, 96, true}); });
VKSPEC_OP_CHECK("group_norm", "128ch 32x32 swish in place", [](Context& c) {
  return check_gn(c, {1, 32, 32, 128, true, true});
});
VKSPEC_OP_CHECK("group_norm", "512ch 16x16", [](Context& c) { return check_gn(c, {1, 16, 16, 512}); });
VKSPEC_OP_CHECK("group_norm", "64ch 1x1 n3", [](Context& c) { return check_gn(c, {3, 1, 1, 64}); });
VKSPEC_OP_CHECK("group_norm", "64ch 9x11 tree reduce swish", [](Context& c) {
  return check_gn(c, {1, 9, 11, 64, true, false, true});
});
VKSPEC_OP_CHECK("group_norm", "128ch 2x3 n2 tree reduce", [](Context& c) {
  return check_gn(c, {2, 2, 3, 128, false, false, true});
});
VKSPEC_OP_CHECK("group_norm", "64ch 17x17 mean 100", [](Context& c) {
  return check_gn(c, {1, 17, 17, 64, false, false, false, 0, 100.0f});
});
// 256-wide workgroups (the GPU default) with both reductions.
VKSPEC_OP_CHECK("group_norm", "64ch 33x33 swish wg256", [](Context& c) {
  return check_gn(c, wide({1, 33, 33, 64, true}, 256));
});
VKSPEC_OP_CHECK("group_norm", "96ch 7x5 n2 tree wg256", [](Context& c) {
  return check_gn(c, wide({2, 7, 5, 96, false, false, true}, 256));
});

}  // namespace
}  // namespace vkspec
