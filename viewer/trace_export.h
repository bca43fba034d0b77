#pragma once
// --save-trace: the runs shown, as a trace file that `vkspec-viewer --trace` replays (the finished
// ones; an error when none finished).
#include <string>
#include <vector>

#include "decoding/trace.h"
#include "viewer/lane_view.h"

namespace vkspec::viewer {

// config: the model and sampler the runs used; its options become the first lane's.
void save_trace(const std::string& path, TraceConfig config, const std::vector<LaneView>& lanes);

}  // namespace vkspec::viewer
