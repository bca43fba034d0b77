#pragma once
// --cfg, --temperature, --top-k, --top-p: each replaces one sampler setting of the model card (or
// of a replayed trace); the ranges are checked when parsed, naming the option.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decoding/sampler_settings.h"
#include "frontend/arg_parser.h"

namespace vkspec::frontend {

struct SamplerOverrides {
  std::optional<float> cfg, temperature, top_p;
  std::optional<int64_t> top_k;

  SamplerSettings applied_to(SamplerSettings settings) const;
};

SamplerOverrides sampler_overrides(const ArgParser& ap);
OptionTable sampler_option_table();
std::vector<std::string> sampler_options();

}  // namespace vkspec::frontend
