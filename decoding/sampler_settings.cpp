#include "decoding/sampler_settings.h"

#include <cmath>
#include <sstream>

#include "common/error.h"

namespace vkspec {

SamplerSettings SamplerSettings::from_defaults(const SamplerDefaults& d) {
  SamplerSettings s;
  s.cfg = d.cfg;
  s.temperature = d.temperature;
  s.top_k = d.top_k;
  s.top_p = d.top_p;
  return s;
}

void SamplerSettings::validate() const {
  if (!std::isfinite(cfg) || cfg < 0 || cfg > 100) throw Error("cfg scale must be a finite number in [0, 100]");
  if (!std::isfinite(temperature) || temperature <= 0 || temperature > 100)
    throw Error("temperature must be a finite number in (0, 100]");
  if (top_k < 0) throw Error("top-k must be >= 0 (0 turns it off)");
  if (!std::isfinite(top_p) || top_p <= 0 || top_p > 1) throw Error("top-p must be in (0, 1]");
  if (!entropy.on) return;
  auto in = [](float x, float lo, float hi) { return std::isfinite(x) && x >= lo && x <= hi; };
  if (!in(entropy.a, 0, 100) || !in(entropy.c, 0, 100) || !(entropy.a + entropy.c > 0))
    throw Error("entropy temperature: a and c must be in [0, 100] and not both 0");
  if (!in(entropy.b, 1e-3f, 1e3f)) throw Error("entropy temperature: b must be in [0.001, 1000]");
}

ops::SamplerParams SamplerSettings::op_params(int64_t vocab, uint64_t seed, ops::SampleMode mode,
                                              uint32_t purpose) const {
  ops::SamplerParams p;
  p.temperature = temperature;
  p.top_k = static_cast<uint32_t>(top_k >= vocab ? 0 : top_k);
  p.top_p = top_p;
  p.cfg = uses_cfg();
  p.cfg_scale = cfg;
  p.cfg_layout = ops::CfgLayout::Halves;
  p.mode = mode;
  p.seed = seed;
  p.purpose = purpose;
  p.entropy = entropy;
  return p;
}

std::string SamplerSettings::str() const {
  std::ostringstream o;
  o << "cfg " << cfg << ", temperature " << temperature << ", top-k " << top_k << ", top-p " << top_p;
  // Only when on, so that the settings of every run before it read (and key sample files) as before.
  if (entropy.on) o << ", entropy temperature a " << entropy.a << " b " << entropy.b << " c " << entropy.c;
  return o.str();
}

}  // namespace vkspec
