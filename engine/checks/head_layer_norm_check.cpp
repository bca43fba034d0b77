#include "engine/checks/op_check.h"
#include "engine/ops/head_layer_norm.h"
#include "engine/ref/head_layer_norm_ref.h"

namespace vkspec {
namespace {

// On the q or k columns of a fused q|k|v matrix [tokens, 3 * heads * head_dim], in place; the
// other columns must come back untouched.
CheckResult check_head_layer_norm(Context& ctx, int64_t tokens, int64_t heads, int64_t head_dim, int64_t groups,
                                  int64_t part) {
  const int64_t width = 3 * heads * head_dim, offset = part * heads * head_dim;
  auto x = random_floats(static_cast<size_t>(tokens * width), 31, -4.0f, 6.0f);
  auto w = random_floats(static_cast<size_t>(groups * head_dim), 32, 0.5f, 1.5f);
  auto b = random_floats(static_cast<size_t>(groups * head_dim), 33, -0.5f, 0.5f);
  Tensor tx = upload_floats(ctx, x, DType::F32, {tokens, width}, "qkv");
  Tensor tw = upload_floats(ctx, w, DType::F32, {groups, head_dim}, "weight");
  Tensor tb = upload_floats(ctx, b, DType::F32, {groups, head_dim}, "bias");
  CommandStream s(ctx);
  ops::head_layer_norm(s, ops::HeadRows::columns(tx.view(), offset, heads, head_dim), tw.view(), tb.view(), 1e-5f);
  s.submit_and_wait();
  const double err =
      normalised_error(download_floats(ctx, tx), ref::head_layer_norm(x, width, offset, heads, head_dim, w, b, 1e-5f));
  return {err, 1e-6,
          "tokens=" + std::to_string(tokens) + " heads=" + std::to_string(heads) + " head_dim=" +
              std::to_string(head_dim) + " groups=" + std::to_string(groups) + (part == 0 ? " (q)" : " (k)")};
}

VKSPEC_OP_CHECK("head_layer_norm", "tokens=3 heads=4 head_dim=16 one group (q)",
                [](Context& c) { return check_head_layer_norm(c, 3, 4, 16, 1, 0); });
VKSPEC_OP_CHECK("head_layer_norm", "tokens=5 heads=8 head_dim=32 four groups (k)",
                [](Context& c) { return check_head_layer_norm(c, 5, 8, 32, 4, 1); });
VKSPEC_OP_CHECK("head_layer_norm", "tokens=67 heads=32 head_dim=128 a group per head (q)",
                [](Context& c) { return check_head_layer_norm(c, 67, 32, 128, 32, 0); });
VKSPEC_OP_CHECK("head_layer_norm", "tokens=2 heads=2 head_dim=12 (k)",
                [](Context& c) { return check_head_layer_norm(c, 2, 2, 12, 1, 1); });

}  // namespace
}  // namespace vkspec
