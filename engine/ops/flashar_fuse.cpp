#include "engine/ops/flashar_fuse.h"

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {
namespace {

struct Push {
  uint32_t rows, vocab, joint;
};

}  // namespace

void flashar_fuse(CommandStream& s, const TensorView& h, const TensorView& v, const TensorView& sources,
                  const FlashArGate& g, const TensorView& fused, const TensorView& gates) {
  const TensorView &fc1 = g.fc1, &gate = g.fc2;
  const char* op = "flashar_fuse";
  require(h.dtype == DType::F32 && v.dtype == DType::F32 && fc1.dtype == DType::F32 && gate.dtype == DType::F32 &&
              fused.dtype == DType::F32 && gates.dtype == DType::F32,
          op, "h, v, fc1, gate, fused and gates must be f32");
  require(sources.dtype == DType::U32 || sources.dtype == DType::I32, op, "sources must be u32");
  require(h.shape.rank == 2 && v.shape.rank == 2 && fused.shape.rank == 2 && h.shape[1] == fused.shape[1] &&
              v.shape[1] == fused.shape[1],
          op, [&] {
            return "h " + h.shape.str() + ", v " + v.shape.str() + " and fused " + fused.shape.str() +
                   " must be [*, vocab]";
          });
  const int64_t rows = fused.shape[0], vocab = fused.shape[1];
  require(sources.numel() == rows * 3 && gates.numel() == rows, op,
          [&] { return "sources must be [" + std::to_string(rows) + ", 3] and gates [" + std::to_string(rows) + "]"; });
  require(fc1.shape.rank == 2 && fc1.shape[1] == 2 * vocab && fc1.shape[0] >= 1 && fc1.shape[0] <= 256 &&
              gate.numel() == fc1.shape[0] + 1,
          op, [&] {
            return "fc1 " + fc1.shape.str() + " must be [P <= 256, 2 vocab] and gate [P + 1], got gate " +
                   gate.shape.str();
          });
  require(rows <= 65535, op, "at most 65535 rows");
  if (rows == 0) return;
  Context& ctx = s.context();
  const uint32_t hidden = static_cast<uint32_t>(fc1.shape[0]);
  // Shared memory holds hidden partial sums per invocation: 8192 floats (32 KiB, lavapipe's). On a
  // CPU driver every barrier switches between the workgroup's invocations: 8 of them took 1.4 ms a
  // 16x16 step on lavapipe, 128 took 2.6 ms.
  const uint32_t cap = std::max<uint32_t>(1, 8192 / hidden - 1);
  const uint32_t wg = pow2_workgroup(ctx, ctx.caps().cpu_driver ? std::min<uint32_t>(cap, 8) : cap);
  s.dispatch(ctx.pipeline(shaders::flashar_fuse, {wg, hidden}), {h, v, sources, fc1, gate, fused, gates},
             Push{static_cast<uint32_t>(rows), static_cast<uint32_t>(vocab), static_cast<uint32_t>(g.norm)},
             static_cast<uint32_t>(rows), 1);
}

}  // namespace vkspec::ops
