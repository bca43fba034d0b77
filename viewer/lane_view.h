#pragma once
// One run on screen: its record, the canvas it is drawn on, and what that canvas shows.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "decoding/strategy.h"
#include "viewer/canvas.h"
#include "viewer/run_record.h"

namespace vkspec::viewer {

struct LaneView {
  std::shared_ptr<RunRecord> record;
  std::string label;  // method and its options
  MethodOptions options;
  std::unique_ptr<Canvas> canvas;
  std::vector<std::shared_ptr<const StepFrame>> frames;  // snapshot taken each UI frame
  const RunRecord* shown_record = nullptr;
  size_t shown_step = SIZE_MAX;
  CellOverlay cells;  // of the shown step: island labels, the tooltip's committing steps
  ImVec2 p0{}, p1{};  // where the canvas was drawn this frame
};

}  // namespace vkspec::viewer
