#include "engine/ops/random.h"

#include <algorithm>

#include "engine/ops/dispatch_util.h"
#include "engine/ops/row_window.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

void philox_fill(CommandStream& s, const TensorView& positions, uint64_t seed, uint32_t purpose, uint32_t first_draw,
                 RandomKind kind, const TensorView& out) {
  const char* op = "philox_fill";
  require(positions.dtype == DType::U32 || positions.dtype == DType::I32, op, "positions must be u32/i32");
  require(out.shape.rank == 2 && out.shape[0] == positions.numel(), op, [&] {
    return "out must be [positions, draws], got " + out.shape.str() + " for " + positions.shape.str() + " positions";
  });
  require(out.dtype == (kind == RandomKind::Bits ? DType::U32 : DType::F32), op,
          [&] { return std::string("out must be ") + (kind == RandomKind::Bits ? "u32" : "f32") + " for this kind"; });
  const uint64_t rows = static_cast<uint64_t>(out.shape[0]), draws = static_cast<uint64_t>(out.shape[1]);
  require(first_draw + draws <= (uint64_t{1} << 32), op, "draw indices pass 2^32");
  if (rows == 0 || draws == 0) return;
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size();
  const Pipeline& pipe = ctx.pipeline(shaders::philox_fill, {wg});
  const uint32_t batch = rows_per_dispatch(ctx, draws * 4, rows, op);
  for (uint64_t r0 = 0; r0 < rows; r0 += batch) {
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(batch, rows - r0));
    const Window pos = window(ctx, positions, r0, n), dst = window(ctx, out, r0 * draws, n * draws);
    // Each invocation writes one block of four consecutive draws.
    const uint32_t blocks_per_row = static_cast<uint32_t>((draws + 3) / 4);
    struct {
      uint32_t rows, draws, blocks_per_row, first_draw, pos_off, out_off, kind, seed_lo, seed_hi, purpose;
    } push{n,
           static_cast<uint32_t>(draws),
           blocks_per_row,
           first_draw,
           pos.offset,
           dst.offset,
           static_cast<uint32_t>(kind),
           static_cast<uint32_t>(seed),
           static_cast<uint32_t>(seed >> 32),
           purpose};
    const Grid g = grid_1d(ctx, uint64_t{n} * blocks_per_row, wg);
    s.dispatch(pipe, {pos.view, dst.view}, push, g.x, g.y);
  }
}

}  // namespace vkspec::ops
