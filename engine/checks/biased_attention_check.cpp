#include "engine/checks/op_check.h"
#include "engine/ops/biased_attention.h"
#include "engine/ref/biased_attention_ref.h"

namespace vkspec {
namespace {

// q|k|v as the column blocks of one fused [tokens, 3 * heads * head_dim] matrix, as the T5 encoder
// feeds it; the bias with some keys masked (a large negative value, as Hugging Face adds).
CheckResult check_biased_attention(Context& ctx, int64_t T, int64_t H, int64_t D, int64_t masked, float scale) {
  const int64_t W = H * D;
  const auto qkv = random_floats(static_cast<size_t>(T * 3 * W), 41, -1.5f, 1.5f);
  auto bias = random_floats(static_cast<size_t>(H * T * T), 42, -3.0f, 3.0f);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = T - masked; j < T; ++j) bias[static_cast<size_t>((h * T + t) * T + j)] += -3.4e38f;
  std::vector<float> q, k, v;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < 3 * W; ++c)
      (c < W ? q : c < 2 * W ? k : v).push_back(qkv[static_cast<size_t>(t * 3 * W + c)]);
  Tensor tqkv = upload_floats(ctx, qkv, DType::F32, {T, 3 * W}, "qkv");
  Tensor tbias = upload_floats(ctx, bias, DType::F32, {H, T, T}, "bias");
  Tensor tout = ctx.tensor(DType::F32, {T, W}, "out");
  CommandStream s(ctx);
  ops::biased_attention(s, ops::HeadRows::columns(tqkv.view(), 0, H, D), ops::HeadRows::columns(tqkv.view(), W, H, D),
                        ops::HeadRows::columns(tqkv.view(), 2 * W, H, D), tbias.view(), tout.view(), scale);
  s.submit_and_wait();
  const double err = normalised_error(download_floats(ctx, tout), ref::biased_attention(q, k, v, bias, T, H, D, scale));
  return {err, 1e-5,
          "tokens=" + std::to_string(T) + " heads=" + std::to_string(H) + " head_dim=" + std::to_string(D) +
              " masked=" + std::to_string(masked)};
}

VKSPEC_OP_CHECK("biased_attention", "tokens=1 heads=1 head_dim=4 masked=0",
                [](Context& c) { return check_biased_attention(c, 1, 1, 4, 0, 1.0f); });
VKSPEC_OP_CHECK("biased_attention", "tokens=13 heads=3 head_dim=8 masked=5",
                [](Context& c) { return check_biased_attention(c, 13, 3, 8, 5, 1.0f); });
// flan-t5-xl's shape at LlamaGen's 120 tokens, a short prompt (most keys padding)
VKSPEC_OP_CHECK("biased_attention", "tokens=120 heads=32 head_dim=64 masked=100",
                [](Context& c) { return check_biased_attention(c, 120, 32, 64, 100, 1.0f); });
VKSPEC_OP_CHECK("biased_attention", "tokens=512 heads=2 head_dim=130 masked=1 scaled",
                [](Context& c) { return check_biased_attention(c, 512, 2, 130, 1, 0.125f); });

}  // namespace
}  // namespace vkspec
