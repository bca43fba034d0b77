#pragma once
// Per-token-cell state the canvas shader draws, built from a run's events up to the displayed step:
// what this step accepted, rejected, resampled or drafted, its rejection islands and verified
// groups, which cells are committed, and the acceptance rate of every cell over the steps so far
// (the heat map).
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "decoding/step_event.h"

namespace vkspec::viewer {

// Keep in sync with viewer/shaders/canvas.frag.
enum CellFlags : uint8_t {
  kCellDecided = 1,
  kCellAccepted = 2,
  kCellRejected = 4,
  kCellResampled = 8,
  kCellDrafted = 16,  // proposed this step but neither accepted, rejected nor resampled
};

struct IslandLabel {
  int id = 0;          // index in the step's islands
  int32_t anchor = 0;  // the island's first cell in raster order, where its id is written
};

struct CellOverlay {
  int64_t grid = 0;
  // grid * grid texels of RGBA8_UINT: r = CellFlags, g = island id % 255 + 1 (0 = none),
  // b = 1 + round(254 * accepted / verified) (0 = never verified), a = group id % 255 + 1 (0 = none).
  std::vector<uint8_t> texels;
  std::vector<IslandLabel> islands;

  uint8_t flags(int32_t cell) const { return texels[static_cast<size_t>(cell) * 4]; }
  uint8_t island(int32_t cell) const { return texels[static_cast<size_t>(cell) * 4 + 1]; }
  uint8_t heat(int32_t cell) const { return texels[static_cast<size_t>(cell) * 4 + 2]; }
  uint8_t group(int32_t cell) const { return texels[static_cast<size_t>(cell) * 4 + 3]; }
};

// events: the run's events from step 0 to the displayed step (the last one), each with its grid.
CellOverlay build_cell_overlay(const std::vector<const StepEvent*>& events, int64_t grid);

// RGB in [0, 1] of island `id`, identical to the shader's island_colour(id % 255): eight colours
// clear of the accepted/rejected/resampled/drafted marks.
std::array<float, 3> island_colour(int id);

}  // namespace vkspec::viewer
