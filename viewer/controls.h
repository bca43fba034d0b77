#pragma once
// The run panel's editable settings, first those of the command line.
#include <memory>
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
  int class_id = 0;        // a class-conditional model's condition
  char prompt[1024] = {};  // a prompt-driven model's (ImGui edits it in place)
  long long seed = 0;
  SamplerSettings sampler;
  int trace_image = 0, trace_compare = -1;
};

// Throws naming an unknown --method or --compare, a --class the model lacks, --class for a model
// that takes prompts or --prompt for one that takes classes, bad sampler settings. A prompt-driven
// model without --prompt starts on the first example prompt (kiosk_prompts.h); a kiosk's box
// starts empty for its visitors.
Controls initial_controls(const ViewerOptions& options, const std::vector<std::string>& methods,
                          const ViewerModels& models);
// The condition the controls give the live runs: the class, or the prompt's (which throws Error
// with the message to show for an empty or too long prompt).
std::shared_ptr<const Condition> condition_of(const Controls& controls, const ViewerModels& models);
// The live runs the controls describe: the method and, side by side, the comparison. Throws on a
// malformed options text or bad sampler settings.
std::vector<frontend::MethodRun> runs_of(const Controls& controls, const std::vector<std::string>& methods);

}  // namespace vkspec::viewer
