#pragma once
// MuLo-SD's rejection islands: every rejected position t grows to its neighbourhood
// N(t, l) = {u : |row_u - row_t| <= l, |col_u - col_t| <= l, first <= u < end}, and the union
// splits into 8-connected components. Each island lists its positions in raster order (the order
// they are resampled in); islands are ordered by their first position.
#include <cstdint>
#include <vector>

namespace vkspec {

std::vector<std::vector<int32_t>> rejection_islands(const std::vector<int32_t>& rejected, int64_t width,
                                                    int64_t radius, int64_t first, int64_t end);

}  // namespace vkspec
