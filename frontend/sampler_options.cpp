#include "frontend/sampler_options.h"

namespace vkspec::frontend {

SamplerSettings SamplerOverrides::applied_to(SamplerSettings s) const {
  if (cfg) s.cfg = *cfg;
  if (temperature) s.temperature = *temperature;
  if (top_k) s.top_k = *top_k;
  if (top_p) s.top_p = *top_p;
  return s;
}

SamplerOverrides sampler_overrides(const ArgParser& ap) {
  SamplerOverrides o;
  if (ap.get("--cfg")) o.cfg = static_cast<float>(ap.get_double("--cfg", 0, 0, 100));
  if (ap.get("--temperature")) o.temperature = static_cast<float>(ap.get_double("--temperature", 1, 1e-6, 100));
  if (ap.get("--top-k")) o.top_k = ap.get_int("--top-k", 0, 0, 1 << 24);
  if (ap.get("--top-p")) o.top_p = static_cast<float>(ap.get_double("--top-p", 1, 1e-6, 1));
  return o;
}

OptionTable sampler_option_table() {
  return {{"--cfg", "S", "classifier-free guidance scale (default: the model card's)"},
          {"--temperature", "T", "sampling temperature (default: the model card's)"},
          {"--top-k", "K", "keep the K likeliest tokens, 0: all (default: the model card's)"},
          {"--top-p", "P", "keep the likeliest tokens up to probability P (default: the model card's)"}};
}

std::vector<std::string> sampler_options() { return option_names(sampler_option_table()); }

}  // namespace vkspec::frontend
