#pragma once
// Which file backs each model role, for every front end: the file given on the command line, else
// the shipped asset trained for the target (each shipped target has its own set: fmnist_gpt16's
// drafters, heads and upsamplers; fmnist_janus's heads). A role a run needs (path()) must
// resolve: a missing shipped asset is an error naming the option that replaces it. A role loaded
// only in case a later run wants it (companion(), the viewer's panel) resolves to the given file,
// else to the shipped asset when it exists and the target is its shipped target (shipped
// companions are trained for their shipped target only).
#include <string>
#include <vector>

#include "frontend/arg_parser.h"

namespace vkspec::frontend {

enum class ModelRole {
  Target,
  Drafter,
  LowRes,
  Heads,
  LatentHeads,
  Eagle,
  SrNet,
  LatentUpsampler,
  FlashAr,
  Tokenizer,
  Classifier
};

// The files given on the command line; empty when not given.
struct ModelFiles {
  std::string target, drafter, low_res, heads, latent_heads, eagle, sr_net, latent_upsampler, flashar, tokenizer,
      classifier;
};

// --model, --vq, --drafter, --low-res, --heads, --latent-heads, --eagle-drafter, --sr-net,
// --latent-upsampler, --flashar, --classifier. `--drafter jacobi|model|eagle` name a way of drafting, not a
// file (the method options carry them), and `--classifier none` stays "none".
// prompted: the run conditions on text prompts, so the default target is the shipped prompt model.
ModelFiles model_files(const ArgParser& ap, bool prompted = false);
// The options model_files reads, but --classifier (only `bench` judges images).
OptionTable model_file_option_table();
std::vector<std::string> model_file_options();
OptionDoc classifier_option();

// $VKSPEC_ASSETS, else the source tree's assets/ baked in at build time, so the binaries work from
// any directory.
std::string asset_dir();

class ModelCatalog {
 public:
  explicit ModelCatalog(ModelFiles given) : given_(std::move(given)) {}

  const std::string& given(ModelRole role) const;
  // The given file, else the shipped asset; throws Error when the shipped asset is missing.
  std::string path(ModelRole role) const;
  // The given file, else the shipped asset when usable with the target (see above); "" otherwise.
  std::string companion(ModelRole role) const;

 private:
  // The index of the target's shipped set (0, the default's, when none is given), or -1 for a
  // target of the user's own.
  int shipped_set() const;

  ModelFiles given_;
};

}  // namespace vkspec::frontend
