#include "frontend/sampler_options.h"

#include "common/error.h"

namespace vkspec::frontend {

SamplerSettings SamplerOverrides::applied_to(SamplerSettings s) const {
  if (cfg) s.cfg = *cfg;
  if (temperature) s.temperature = *temperature;
  if (top_k) s.top_k = *top_k;
  if (top_p) s.top_p = *top_p;
  if (entropy) s.entropy.on = true;
  if (entropy_a) s.entropy.a = *entropy_a;
  if (entropy_b) s.entropy.b = *entropy_b;
  if (entropy_c) s.entropy.c = *entropy_c;
  if ((entropy_a || entropy_b || entropy_c) && !s.entropy.on)
    throw Error("--entropy-a/-b/-c set the entropy-aware temperature's constants: give --entropy-temperature too");
  if (s.entropy.on && !(s.entropy.a + s.entropy.c > 0))
    throw Error("--entropy-a and --entropy-c are both 0: the temperature would be 0");
  return s;
}

SamplerOverrides sampler_overrides(const ArgParser& ap) {
  SamplerOverrides o;
  if (ap.get("--cfg")) o.cfg = static_cast<float>(ap.get_double("--cfg", 0, 0, 100));
  if (ap.get("--temperature")) o.temperature = static_cast<float>(ap.get_double("--temperature", 1, 1e-6, 100));
  if (ap.get("--top-k")) o.top_k = ap.get_int("--top-k", 0, 0, 1 << 24);
  if (ap.get("--top-p")) o.top_p = static_cast<float>(ap.get_double("--top-p", 1, 1e-6, 1));
  o.entropy = ap.flag("--entropy-temperature");
  if (ap.get("--entropy-a")) o.entropy_a = static_cast<float>(ap.get_double("--entropy-a", 2.5, 0, 100));
  if (ap.get("--entropy-b")) o.entropy_b = static_cast<float>(ap.get_double("--entropy-b", 3, 1e-3, 1e3));
  if (ap.get("--entropy-c")) o.entropy_c = static_cast<float>(ap.get_double("--entropy-c", 0.6, 0, 100));
  return o;
}

OptionTable sampler_option_table() {
  return {{"--cfg", "S", "classifier-free guidance scale (default: the model card's)"},
          {"--temperature", "T", "sampling temperature (default: the model card's)"},
          {"--top-k", "K", "keep the K likeliest tokens, 0: all (default: the model card's)"},
          {"--top-p", "P", "keep the likeliest tokens up to probability P (default: the model card's)"},
          {"--entropy-temperature", "",
           "entropy-aware temperature (Ma et al. 2025): each position samples at T * (A exp(-H / B) + C), H the "
           "entropy in nats of its filtered distribution (off by default)"},
          {"--entropy-a", "A", "its A (default 2.5, the released code's)"},
          {"--entropy-b", "B", "its B (default 3)"},
          {"--entropy-c", "C", "its C (default 0.6)"}};
}

}  // namespace vkspec::frontend
