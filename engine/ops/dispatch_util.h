#pragma once
// Helpers every op uses to size its grid and check its arguments.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

#include "common/error.h"
#include "engine/vk/command_stream.h"
#include "engine/vk/context.h"

namespace vkspec::ops {

struct Grid {
  uint32_t x = 1, y = 1, z = 1;
};

// Workgroups covering n invocations of a 1D kernel of workgroup size wg; spills into y when x
// would exceed the device limit (shaders use linear_invocation() from common.glsl).
Grid grid_1d(const Context& ctx, uint64_t n, uint32_t wg);

inline uint32_t ceil_div(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }
// The largest power of two <= min(the device's default workgroup size, cap): workgroups of the
// shaders whose tree reductions halve the group each round, into shared arrays of cap entries.
inline uint32_t pow2_workgroup(const Context& ctx, uint32_t cap) {
  uint32_t wg = 1;
  while (wg * 2 <= std::min<uint32_t>(ctx.default_workgroup_size(), cap)) wg *= 2;
  return wg;
}

// The most subgroups a workgroup of wg invocations can hold: storage a shader keeps per subgroup
// (shared partial sums) is sized for the smallest subgroup size the device may run.
inline uint32_t max_subgroups_in(const DeviceCaps& caps, uint32_t wg) {
  const uint32_t min_sg = std::max<uint32_t>(caps.min_subgroup_size ? caps.min_subgroup_size : caps.subgroup_size, 1);
  return (wg + min_sg - 1) / min_sg;
}

// Whether a kernel can read v through its tensor's texel view (TensorView::texels): the view
// exists, covers v, and v starts on a texel (the kernel adds (v.offset - texels.begin) / 16).
inline bool texel_readable(const TensorView& v) {
  const TexelView& t = v.texels;
  return t.view && v.offset >= t.begin && (v.offset - t.begin) % 16 == 0 && v.offset + v.bytes <= t.begin + t.bytes;
}

// Whether two views share any byte of one buffer (ops that forbid aliasing check it).
inline bool overlap(const TensorView& a, const TensorView& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

// Throws Error("<op>: <what>") when cond is false. Ops check their arguments on every call, and a
// message built before the check would allocate on every dispatch (host time a GPU waits for), so
// a message is either a literal or a callable that builds it only on failure:
//   require(ok, op, "x must be f32");
//   require(ok, op, [&] { return "x is " + x.shape.str(); });
inline void require(bool cond, const char* op, const char* what) {
  if (!cond) throw Error(std::string(op) + ": " + what);
}
template <typename Message, typename = std::enable_if_t<std::is_invocable_v<Message>>>
void require(bool cond, const char* op, Message&& what) {
  if (!cond) throw Error(std::string(op) + ": " + what());
}

// A row-wise kernel over an [N, H, W, C] input x writing y (pixel_shuffle, upsample): x's N * H
// rows of W * C elements, a row's workgroups along x and one row per y (the shaders loop over
// rows past the device's limit). Checks that y does not overlap x and that the grid and y's
// element count fit (Error "<op>: ...: <what()>").
struct RowGrid {
  uint32_t rows = 0, row_elems = 0, x = 1, y = 1;
};
RowGrid nhwc_row_grid(const Context& ctx, const TensorView& x, const TensorView& y, uint32_t wg, const char* op,
                      const std::function<std::string()>& what);

}  // namespace vkspec::ops
