#pragma once
// Per-token-cell state the canvas shader draws, built from a run's events up to the displayed step:
// what this step accepted, rejected, resampled or drafted, its rejection islands and verified
// groups, which cells are committed, the acceptance rate of every cell over the steps so far
// (the heat map), and for every committed cell what the step that committed it was: the depth and
// width of its draft tree (adaptive-tree, vvs --tree adaptive), whether a target forward
// verified it (vvs's skipped rounds did not) and the weight of FlashAR's horizontal head in it.
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
  // Committed, this step or earlier, by a step that no target forward verified (StepEvent::verified).
  kCellUnverified = 32,
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
  // A second grid * grid RGBA8_UINT texture, of the step that committed each decided cell:
  // r = its draft tree's depth, g = its width (each min 255; 0 = the step had no tree size),
  // b = 1 + round(254 g), g the weight of the horizontal head in its logits (StepEvent::gates,
  // flashar; 0 = none), a = 0.
  std::vector<uint8_t> tree_texels;
  int32_t tree_depth_max = 0;  // the deepest tree of the steps so far (the ramp's top); 0: none
  // Index in `events` of the step that committed each decided cell, -1 elsewhere; only filled when
  // some step so far has a tree size or is unverified (empty otherwise).
  std::vector<int32_t> commit_step;
  std::vector<IslandLabel> islands;

  uint8_t flags(int32_t cell) const { return texels[static_cast<size_t>(cell) * 4]; }
  uint8_t island(int32_t cell) const { return texels[static_cast<size_t>(cell) * 4 + 1]; }
  uint8_t heat(int32_t cell) const { return texels[static_cast<size_t>(cell) * 4 + 2]; }
  uint8_t group(int32_t cell) const { return texels[static_cast<size_t>(cell) * 4 + 3]; }
  uint8_t tree_depth(int32_t cell) const { return tree_texels[static_cast<size_t>(cell) * 4]; }
  uint8_t tree_width(int32_t cell) const { return tree_texels[static_cast<size_t>(cell) * 4 + 1]; }
  uint8_t gate(int32_t cell) const { return tree_texels[static_cast<size_t>(cell) * 4 + 2]; }
};

// events: the run's events from step 0 to the displayed step (the last one), each with its grid.
CellOverlay build_cell_overlay(const std::vector<const StepEvent*>& events, int64_t grid);

// RGB in [0, 1] of island `id`, identical to the shader's island_colour(id % 255): eight colours
// clear of the accepted/rejected/resampled/drafted marks.
std::array<float, 3> island_colour(int id);

}  // namespace vkspec::viewer
