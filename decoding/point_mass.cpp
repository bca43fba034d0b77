#include "decoding/point_mass.h"

#include "engine/ops/det_math.h"

namespace vkspec {

void record_point_masses(CommandStream& s, const Tensor& q, const std::vector<std::pair<int64_t, uint32_t>>& rows) {
  const int64_t V = q.shape()[1];
  const TensorView flat = q.view().reshape({q.shape()[0] * V});
  for (const auto& [r, t] : rows) s.fill(q.view().rows(r, 1), 0u);
  for (const auto& [r, t] : rows) s.fill(flat.rows(r * V + t, 1), det::float_bits(1.0f));
}

}  // namespace vkspec
