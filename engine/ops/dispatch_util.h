#pragma once
// Helpers every op uses to size its grid and check its arguments.
#include <cstdint>
#include <string>

#include "engine/vk/command_stream.h"
#include "engine/vk/context.h"
#include "common/error.h"

namespace vkspec::ops {

struct Grid {
  uint32_t x = 1, y = 1, z = 1;
};

// Workgroups covering n invocations of a 1D kernel of workgroup size wg; spills into y when x
// would exceed the device limit (shaders use linear_invocation() from common.glsl).
Grid grid_1d(const Context& ctx, uint64_t n, uint32_t wg);

inline uint32_t ceil_div(uint64_t a, uint64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

// Whether two views share any byte of one buffer (ops that forbid aliasing check it).
inline bool overlap(const TensorView& a, const TensorView& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

// Throws Error("<op>: <what>") when cond is false.
inline void require(bool cond, const char* op, const std::string& what) {
  if (!cond) throw Error(std::string(op) + ": " + what);
}

}  // namespace vkspec::ops
