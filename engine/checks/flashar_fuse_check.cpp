#include <cmath>

#include "engine/checks/op_check.h"
#include "engine/ops/flashar_fuse.h"
#include "engine/ref/flashar_fuse_ref.h"

namespace vkspec {
namespace {

// `rows` output rows over `in_rows` rows of H and V, kinds cycling gated / H only / V only (every
// third row gated also at in_rows = 1), logits spread like a head's, fc1 ~ U(+-1/sqrt(2 vocab)).
CheckResult check_flashar_fuse(Context& ctx, int64_t rows, int64_t in_rows, int64_t vocab, int64_t hidden,
                               ops::FlashArGateNorm norm = ops::FlashArGateNorm::PerHead) {
  const auto h = random_floats(static_cast<size_t>(in_rows * vocab), 31, -8.0f, 8.0f);
  // V offset and narrower than H: normalising the two as one differs visibly from each on its own.
  const auto v = random_floats(static_cast<size_t>(in_rows * vocab), 32, -3.0f, 5.0f);
  const float s = 1.0f / std::sqrt(static_cast<float>(2 * vocab));
  const auto fc1 = random_floats(static_cast<size_t>(hidden * 2 * vocab), 33, -s, s);
  const auto gate = random_floats(static_cast<size_t>(hidden + 1), 34, -1.5f, 1.5f);
  std::vector<uint32_t> sources;
  for (int64_t r = 0; r < rows; ++r) {
    sources.push_back(static_cast<uint32_t>(r % in_rows));
    sources.push_back(static_cast<uint32_t>((r * 7 + 1) % in_rows));
    sources.push_back(static_cast<uint32_t>(r % 3));
  }
  Tensor th = upload_floats(ctx, h, DType::F32, {in_rows, vocab}, "h");
  Tensor tv = upload_floats(ctx, v, DType::F32, {in_rows, vocab}, "v");
  Tensor tf1 = upload_floats(ctx, fc1, DType::F32, {hidden, 2 * vocab}, "fc1");
  Tensor tg = upload_floats(ctx, gate, DType::F32, {hidden + 1}, "gate");
  Tensor ts = ctx.tensor(DType::U32, {rows, 3}, "sources");
  ctx.upload(ts, sources.data(), sources.size() * 4);
  Tensor tout = ctx.tensor(DType::F32, {rows, vocab}, "fused");
  Tensor tgates = ctx.tensor(DType::F32, {rows}, "gates");
  CommandStream st(ctx);
  ops::flashar_fuse(st, th, tv, ts, {tf1.view(), tg.view(), norm}, tout, tgates);
  st.submit_and_wait();
  const bool joint = norm == ops::FlashArGateNorm::Joint;
  const ref::FlashArFused want = ref::flashar_fuse(h, v, sources, fc1, gate, vocab, joint);
  const double err = std::max(normalised_error(download_floats(ctx, tout), want.fused),
                              normalised_error(download_floats(ctx, tgates), want.gates));
  return {err, 1e-5,
          "rows=" + std::to_string(rows) + " vocab=" + std::to_string(vocab) + " hidden=" + std::to_string(hidden) +
              (joint ? " joint" : "")};
}

VKSPEC_OP_CHECK("flashar_fuse", "rows=1 vocab=1024 hidden=32 (the corner)",
                [](Context& c) { return check_flashar_fuse(c, 1, 1, 1024, 32); });
VKSPEC_OP_CHECK("flashar_fuse", "rows=32 vocab=1024 hidden=32 (a 16x16 diagonal, CFG)",
                [](Context& c) { return check_flashar_fuse(c, 32, 30, 1024, 32); });
VKSPEC_OP_CHECK("flashar_fuse", "rows=7 vocab=16384 hidden=32 (LlamaGen's vocabulary)",
                [](Context& c) { return check_flashar_fuse(c, 7, 5, 16384, 32); });
VKSPEC_OP_CHECK("flashar_fuse", "rows=4 vocab=64 hidden=3 (odd sizes)",
                [](Context& c) { return check_flashar_fuse(c, 4, 2, 64, 3); });
VKSPEC_OP_CHECK("flashar_fuse", "rows=32 vocab=1024 hidden=32 joint (the released gate's normalisation)",
                [](Context& c) { return check_flashar_fuse(c, 32, 30, 1024, 32, ops::FlashArGateNorm::Joint); });
VKSPEC_OP_CHECK("flashar_fuse", "rows=7 vocab=16384 hidden=32 joint",
                [](Context& c) { return check_flashar_fuse(c, 7, 5, 16384, 32, ops::FlashArGateNorm::Joint); });

}  // namespace
}  // namespace vkspec
