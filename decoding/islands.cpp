#include "decoding/islands.h"

#include <algorithm>

#include "common/error.h"

namespace vkspec {

std::vector<std::vector<int32_t>> rejection_islands(const std::vector<int32_t>& rejected, int64_t width, int64_t radius,
                                                    int64_t first, int64_t end) {
  if (width < 1 || radius < 0 || first < 0 || end < first) throw Error("rejection islands: bad grid range");
  const int64_t n = end - first;
  std::vector<uint8_t> in(static_cast<size_t>(n), 0);
  for (int32_t t : rejected) {
    if (t < first || t >= end)
      throw Error("rejection islands: rejected position " + std::to_string(t) + " outside [" + std::to_string(first) +
                  ", " + std::to_string(end) + ")");
    const int64_t r = t / width, c = t % width;
    for (int64_t dr = -radius; dr <= radius; ++dr)
      for (int64_t dc = -radius; dc <= radius; ++dc) {
        const int64_t rr = r + dr, cc = c + dc;
        if (cc < 0 || cc >= width || rr < 0) continue;
        const int64_t u = rr * width + cc;
        if (u >= first && u < end) in[static_cast<size_t>(u - first)] = 1;
      }
  }
  // Flood fill in raster order: scanning positions in order makes islands ordered by their first
  // position; each island's list is sorted afterwards.
  std::vector<std::vector<int32_t>> islands;
  std::vector<int64_t> stack;
  for (int64_t start = 0; start < n; ++start) {
    if (in[static_cast<size_t>(start)] != 1) continue;
    std::vector<int32_t> island;
    in[static_cast<size_t>(start)] = 2;
    stack.push_back(start + first);
    while (!stack.empty()) {
      const int64_t u = stack.back();
      stack.pop_back();
      island.push_back(static_cast<int32_t>(u));
      const int64_t r = u / width, c = u % width;
      for (int64_t dr = -1; dr <= 1; ++dr)
        for (int64_t dc = -1; dc <= 1; ++dc) {
          const int64_t rr = r + dr, cc = c + dc, v = rr * width + cc;
          if ((dr || dc) && cc >= 0 && cc < width && rr >= 0 && v >= first && v < end &&
              in[static_cast<size_t>(v - first)] == 1) {
            in[static_cast<size_t>(v - first)] = 2;
            stack.push_back(v);
          }
        }
    }
    std::sort(island.begin(), island.end());
    islands.push_back(std::move(island));
  }
  return islands;
}

std::vector<int32_t> island_ready_positions(const std::vector<int32_t>& island, int64_t width, int64_t window) {
  if (width < 1 || window < 1) throw Error("island waves: the grid width and the window must be at least 1");
  std::vector<int32_t> ready;
  // Scanning in raster order, the smallest column seen so far decides: p waits while an earlier
  // undecided position sits at a column <= col(p) + window - 1.
  int64_t min_col = width + window;  // none seen yet
  for (size_t i = 0; i < island.size(); ++i) {
    if (i > 0 && island[i] <= island[i - 1]) throw Error("island waves: positions must be in raster order");
    const int64_t c = island[i] % width;
    if (min_col > c + window - 1) ready.push_back(island[i]);
    min_col = std::min(min_col, c);
  }
  return ready;
}

}  // namespace vkspec
