#pragma once
// The one way to check an f32 elementwise unary op (ops/unary.h) against its CPU reference:
// x uniform in [lo, hi) from seed, its first two elements -100 and 100 where there are more than
// two (both tails and exp overflow), out of place or in place; tolerance 1e-6.
#include <cstdint>
#include <vector>

#include "engine/checks/op_check.h"
#include "engine/vk/command_stream.h"

namespace vkspec {

struct UnaryOpCase {
  void (*op)(CommandStream&, const TensorView& x, const TensorView& y);
  std::vector<float> (*reference)(const std::vector<float>& x);
  uint64_t seed;
  float lo, hi;
};

CheckResult check_unary_op(Context& ctx, const UnaryOpCase& c, Shape shape, bool in_place);

}  // namespace vkspec
