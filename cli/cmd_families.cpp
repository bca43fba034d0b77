// `vkspec families`: every registered model family (engine/model/model_family.h) with what a user
// gives its models and the code it follows; which family a model file is, with --model FILE.
#include <cstdio>

#include "cli/commands.h"
#include "engine/model/model_family.h"
#include "frontend/arg_parser.h"

namespace vkspec::cli {

frontend::OptionTable families_options() {
  return {{"--model", "FILE", "also say which family this model file is, and its configuration"}};
}

int cmd_families(const Args& args) {
  frontend::ArgParser ap("families", families_options());
  ap.parse(args);
  for (const ModelFamilyDescriptor* d : model_families())
    std::printf("%s\n  %s\n  reference: %s\n\n", d->name.c_str(), d->summary.c_str(), d->reference.c_str());
  if (const auto file = ap.get("--model")) {
    const SafetensorsFile f(*file);
    const ModelFamilyDescriptor& family = model_family_of(f);
    const GptConfig cfg = family.config(f);
    const char* input = cfg.input == ConditionInput::Prompt              ? "--prompt TEXT"
                        : cfg.input == ConditionInput::CaptionEmbeddings ? "--caption-embeddings FILE"
                                                                         : "--class N";
    std::printf("%s: %s, dim %lld, %lld layers, %lld heads, %lldx%lld image tokens of %lld, %lld condition "
                "position(s); takes %s\n",
                file->c_str(), family.name.c_str(), static_cast<long long>(cfg.dim),
                static_cast<long long>(cfg.n_layer), static_cast<long long>(cfg.n_head),
                static_cast<long long>(cfg.grid_size), static_cast<long long>(cfg.grid_size),
                static_cast<long long>(cfg.vocab_size), static_cast<long long>(cfg.cls_token_num), input);
  }
  return 0;
}

}  // namespace vkspec::cli
