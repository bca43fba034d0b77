#pragma once
// MuLo-SD's rejection islands: every rejected position t grows to its neighbourhood
// N(t, l) = {u : |row_u - row_t| <= l, |col_u - col_t| <= l, first <= u < end}, and the union
// splits into 8-connected components. Each island lists its positions in raster order (the order
// they are resampled in); islands are ordered by their first position.
#include <cstdint>
#include <vector>

namespace vkspec {

std::vector<std::vector<int32_t>> rejection_islands(const std::vector<int32_t>& rejected, int64_t width, int64_t radius,
                                                    int64_t first, int64_t end);

// The positions of an island (its undecided positions, raster order) that one ZipAR-style wave
// resamples together: p is ready when no undecided position before it in raster order lies in a
// column <= col(p) + window - 1, i.e. the island's part of the row above is `window` columns ahead
// of p and p's left neighbours in the island are decided (ZipAR's rule, restricted to the island).
// window >= width gives the front alone (raster order); window < 1 throws.
std::vector<int32_t> island_ready_positions(const std::vector<int32_t>& island, int64_t width, int64_t window);

}  // namespace vkspec
