#include "viewer/cell_overlay.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace vkspec::viewer {

CellOverlay build_cell_overlay(const std::vector<const StepEvent*>& events, int64_t grid) {
  CellOverlay o;
  o.grid = grid;
  const size_t T = static_cast<size_t>(grid * grid);
  o.texels.assign(T * 4, 0);
  if (events.empty()) return o;
  auto in_range = [&](int32_t p) { return p >= 0 && static_cast<size_t>(p) < T; };

  std::vector<uint32_t> accepted(T, 0), verified(T, 0);
  for (const StepEvent* e : events) {
    for (int32_t p : e->accepted)
      if (in_range(p)) ++accepted[static_cast<size_t>(p)], ++verified[static_cast<size_t>(p)];
    for (int32_t p : e->rejected)
      if (in_range(p)) ++verified[static_cast<size_t>(p)];
  }
  for (size_t c = 0; c < T; ++c)
    if (verified[c]) o.texels[c * 4 + 2] = static_cast<uint8_t>(1 + std::lround(254.0 * accepted[c] / verified[c]));

  const StepEvent& e = *events.back();
  if (e.grid.size() != T)
    throw Error("step " + std::to_string(e.step) + " carries a grid of " + std::to_string(e.grid.size()) +
                " cells, expected " + std::to_string(T));
  for (size_t c = 0; c < T; ++c)
    if (e.grid[c] != kUndecided) o.texels[c * 4] |= kCellDecided;
  auto mark = [&](const std::vector<int32_t>& cells, uint8_t flag) {
    for (int32_t p : cells)
      if (in_range(p)) o.texels[static_cast<size_t>(p) * 4] |= flag;
  };
  mark(e.accepted, kCellAccepted);
  mark(e.rejected, kCellRejected);
  mark(e.resampled, kCellResampled);
  for (int32_t p : e.proposed)
    if (in_range(p) && !(o.texels[static_cast<size_t>(p) * 4] & (kCellAccepted | kCellRejected | kCellResampled)))
      o.texels[static_cast<size_t>(p) * 4] |= kCellDrafted;
  for (size_t i = 0; i < e.islands.size(); ++i) {
    int32_t anchor = -1;
    for (int32_t p : e.islands[i])
      if (in_range(p)) {
        o.texels[static_cast<size_t>(p) * 4 + 1] = static_cast<uint8_t>(i % 255 + 1);
        anchor = anchor < 0 ? p : std::min(anchor, p);
      }
    if (anchor >= 0) o.islands.push_back({static_cast<int>(i), anchor});
  }
  for (size_t i = 0; i < e.groups.size(); ++i)
    for (int32_t p : e.groups[i])
      if (in_range(p)) o.texels[static_cast<size_t>(p) * 4 + 3] = static_cast<uint8_t>(i % 255 + 1);
  return o;
}

std::array<float, 3> island_colour(int id) {
  static const std::array<float, 3> kPalette[8] = {{1.0f, 0.3f, 1.0f}, {0.2f, 1.0f, 1.0f},   {1.0f, 1.0f, 1.0f},
                                                   {0.6f, 0.4f, 1.0f}, {1.0f, 0.55f, 0.75f}, {0.3f, 0.8f, 0.7f},
                                                   {1.0f, 1.0f, 0.6f}, {0.8f, 0.7f, 1.0f}};
  return kPalette[static_cast<size_t>(id % 255) % 8];
}

}  // namespace vkspec::viewer
