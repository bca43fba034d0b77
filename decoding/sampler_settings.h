#pragma once
// The sampler settings every strategy applies to every distribution it samples from or verifies
// against (target p and draft q alike: verifying against a q without the same filtering silently
// breaks losslessness).
#include <cstdint>
#include <string>

#include "engine/model/gpt_config.h"
#include "engine/ops/sampler.h"

namespace vkspec {

struct SamplerSettings {
  float cfg = 4.0f;          // classifier-free guidance scale; <= 1 runs without the null class
  float temperature = 1.0f;  // > 0 (1e-5 floor as LlamaGen)
  int64_t top_k = 0;         // 0 = off; clamped to the vocabulary
  float top_p = 1.0f;        // (0, 1]; 1 = off
  // Ma et al.'s entropy-aware temperature: per position T = temperature * (a exp(-H / b) + c),
  // H the entropy of the CFG'd, filtered distribution (engine/ops/sampler.h, step E). Off by default.
  ops::EntropyTemperature entropy;

  static SamplerSettings from_defaults(const SamplerDefaults& d);
  bool uses_cfg() const { return cfg > 1.0f; }
  // Throws Error naming the bad setting.
  void validate() const;
  // The op parameters for sampling with this seed and purpose.
  ops::SamplerParams op_params(int64_t vocab, uint64_t seed, ops::SampleMode mode, uint32_t purpose) const;
  std::string str() const;
};

}  // namespace vkspec
