#pragma once
// What the viewer shows runs of: the models (the front end's, with every companion the panel may
// ask for) or a trace replayed without them, and the frame decoder that draws either.
#include <memory>
#include <optional>
#include <string>

#include "decoding/trace.h"
#include "decoding/trace_reader.h"
#include "frontend/model_loading.h"
#include "viewer/frame_decoder.h"
#include "viewer/viewer_options.h"

namespace vkspec::viewer {

// The trace of --trace, checked against --image and --compare-image; none without --trace.
std::optional<Trace> read_replay(const ViewerOptions& options);

class ViewerModels {
 public:
  // Without `replay`: the catalog's target, tokenizer and codebook neighbours and the companions
  // it has, sized for any window the panel may ask for. With it: only a tokenizer, when one fits.
  ViewerModels(Context& ctx, const frontend::ModelCatalog& catalog, std::optional<Trace> replay);
  ViewerModels(const ViewerModels&) = delete;
  ViewerModels& operator=(const ViewerModels&) = delete;

  const Trace* replay() const { return replay_ ? &*replay_ : nullptr; }
  int64_t grid() const { return grid_; }
  int64_t num_classes() const { return num_classes_; }
  // Whether the live runs' condition is a text prompt (Janus-Pro) instead of a class label.
  bool takes_prompt() const;
  // The condition for `prompt`; throws Error (an empty or too long prompt, a model that takes no
  // prompt or names no tokenizer) with the message to show.
  std::shared_ptr<const Condition> prompt_condition(const std::string& prompt) const;
  // The target for messages: "model.safetensors (janus-pro)".
  std::string target_name() const;
  // Why token ids are shown as colours instead of the VQ decoder's pixels ("" when they are not).
  const std::string& decoder_note() const { return decoder_note_; }

  // Live runs only.
  ModelSet strategy_models() const { return loaded_.set(ctx_); }
  // The model card's sampler settings, or the trace's.
  SamplerSettings default_sampler() const;
  // The header of a trace of runs shown with `sampler` (a replay keeps its own).
  TraceConfig trace_config(const SamplerSettings& sampler) const;
  std::unique_ptr<FrameDecoder> make_frame_decoder();

 private:
  void load_replay_tokenizer(const frontend::ModelCatalog& catalog);

  Context& ctx_;
  std::optional<Trace> replay_;
  frontend::LoadedModels loaded_;
  std::unique_ptr<Tokenizer> frame_tokenizer_;  // the frame decoder's own
  int64_t grid_ = 0, num_classes_ = 0;
  std::string decoder_note_;
};

}  // namespace vkspec::viewer
