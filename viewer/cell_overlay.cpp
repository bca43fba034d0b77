#include "viewer/cell_overlay.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace vkspec::viewer {
namespace {

uint8_t clamp_byte(int32_t v) { return static_cast<uint8_t>(std::clamp<int32_t>(v, 0, 255)); }

// The tree plane and kCellUnverified: what the step that committed each decided cell was. Only
// runs with a step that has a tree size or is unverified pay for finding those steps (O(cells) a
// step); for the others the tree plane stays zero and commit_step empty. A step commits the cells
// its grid has decided and the grid before it had not (a step without a grid of the right size:
// the cells it lists as accepted or resampled); a cell undecided again (none of the methods does
// that) loses its step.
void mark_committing_steps(CellOverlay& o, const std::vector<const StepEvent*>& events, size_t T) {
  bool any = false;
  for (const StepEvent* e : events) {
    o.tree_depth_max = std::max(o.tree_depth_max, e->tree_depth);
    any = any || e->tree_depth > 0 || !e->verified;
  }
  if (!any) return;
  o.commit_step.assign(T, -1);
  for (size_t i = 0; i < events.size(); ++i) {
    const StepEvent& e = *events[i];
    const int32_t step = static_cast<int32_t>(i);
    if (e.grid.size() == T) {
      for (size_t c = 0; c < T; ++c)
        if (e.grid[c] == kUndecided)
          o.commit_step[c] = -1;
        else if (o.commit_step[c] < 0)
          o.commit_step[c] = step;
      continue;
    }
    for (const auto* list : {&e.accepted, &e.resampled})
      for (int32_t p : *list)
        if (p >= 0 && static_cast<size_t>(p) < T && o.commit_step[static_cast<size_t>(p)] < 0)
          o.commit_step[static_cast<size_t>(p)] = step;
  }
  for (size_t c = 0; c < T; ++c) {
    if (o.commit_step[c] < 0) continue;
    const StepEvent& e = *events[static_cast<size_t>(o.commit_step[c])];
    if (e.tree_depth > 0) {
      o.tree_texels[c * 4] = clamp_byte(e.tree_depth);
      o.tree_texels[c * 4 + 1] = clamp_byte(e.tree_width);
    }
    if (!e.verified) o.texels[c * 4] |= kCellUnverified;
  }
}

// The gate plane: each accepted cell of a step with gates (flashar) takes its weight of H.
void mark_gates(CellOverlay& o, const std::vector<const StepEvent*>& events, size_t T) {
  for (const StepEvent* e : events) {
    if (e->gates.size() != e->accepted.size()) continue;
    for (size_t i = 0; i < e->gates.size(); ++i) {
      const int32_t p = e->accepted[i];
      if (p < 0 || static_cast<size_t>(p) >= T) continue;
      const float g = std::clamp(e->gates[i], 0.0f, 1.0f);
      o.tree_texels[static_cast<size_t>(p) * 4 + 2] = static_cast<uint8_t>(1 + std::lround(254.0f * g));
    }
  }
}

}  // namespace

CellOverlay build_cell_overlay(const std::vector<const StepEvent*>& events, int64_t grid) {
  CellOverlay o;
  o.grid = grid;
  const size_t T = static_cast<size_t>(grid * grid);
  o.texels.assign(T * 4, 0);
  o.tree_texels.assign(T * 4, 0);
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
  mark_committing_steps(o, events, T);
  mark_gates(o, events, T);
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
