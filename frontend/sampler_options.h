#pragma once
// --cfg, --temperature, --top-k, --top-p: each replaces one sampler setting of the model card (or
// of a replayed trace); the ranges are checked when parsed, naming the option.
// --entropy-temperature turns on the entropy-aware temperature (off unless given, or unless a
// replayed trace had it), --entropy-a/-b/-c replace its constants (they need it on).
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
  bool entropy = false;
  std::optional<float> entropy_a, entropy_b, entropy_c;

  SamplerSettings applied_to(SamplerSettings settings) const;
};

SamplerOverrides sampler_overrides(const ArgParser& ap);
OptionTable sampler_option_table();

}  // namespace vkspec::frontend
