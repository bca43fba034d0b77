#pragma once
// The run panel's editable settings, first those of the command line.
#include <string>
#include <vector>

#include "decoding/sampler_settings.h"
#include "frontend/model_loading.h"
#include "viewer/viewer_models.h"
#include "viewer/viewer_options.h"

namespace vkspec::viewer {

struct Controls {
  int method = 0, compare = -1;  // indices into the method list; -1: no comparison
  char options[256] = {}, compare_options[256] = {};
  int class_id = 0;
  long long seed = 0;
  SamplerSettings sampler;
  int trace_image = 0, trace_compare = -1;
};

// Throws naming an unknown --method or --compare, a --class the model lacks, bad sampler settings.
Controls initial_controls(const ViewerOptions& options, const std::vector<std::string>& methods,
                          const ViewerModels& models);
// The live runs the controls describe: the method and, side by side, the comparison. Throws on a
// malformed options text or bad sampler settings.
std::vector<frontend::MethodRun> runs_of(const Controls& controls, const std::vector<std::string>& methods);

}  // namespace vkspec::viewer
