#pragma once
// The models and sampler settings `generate` and `bench` share: --model, --vq, --drafter,
// --low-res, --heads, --cfg/--temperature/--top-k/--top-p, loaded once for every method a command runs
// (the method's StrategyDescriptor::needs says which ones it wants).
//
// --drafter takes `jacobi` (LANTERN's self-drafting, no model), `model` (the shipped drafter) or a
// model file; methods with a drafter model use the shipped one when --drafter is absent.
#include <memory>
#include <string>
#include <vector>

#include "cli/arg_parser.h"
#include "decoding/sampler_settings.h"
#include "decoding/strategy.h"
#include "engine/model/codebook_neighbours.h"
#include "engine/model/draft_heads.h"
#include "engine/model/vq_model.h"

namespace vkspec::cli {

struct MethodRun {
  std::string method;
  MethodOptions options;
};

struct LoadedModels {
  std::unique_ptr<Gpt> target, drafter, low_res;
  std::unique_ptr<VqModel> vq;
  std::unique_ptr<CodebookNeighbours> neighbours;
  std::unique_ptr<DraftHeads> heads;
  ModelSet set(Context& ctx) const;
};

// want_vq: the command needs the tokenizer itself (decoding images); vq_batch: the most images per
// decode call.
LoadedModels load_models(Context& ctx, const ArgParser& ap, const std::vector<MethodRun>& runs, bool want_vq,
                         int64_t vq_batch);

// The model's card defaults overridden by --cfg, --temperature, --top-k, --top-p.
SamplerSettings sampler_settings(const ArgParser& ap, const GptConfig& cfg);

// The flags load_models and sampler_settings read (for a command's list of known flags).
std::vector<std::string> model_flags();

}  // namespace vkspec::cli
