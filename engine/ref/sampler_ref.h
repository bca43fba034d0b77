#pragma once
// CPU reference of ops::sampler, written from the definition in engine/ops/sampler.h (sorts
// where the GPU selects by radix); tokens and probabilities must match it bit for bit (tests and
// --check modes only).
#include <cstdint>
#include <vector>

#include "engine/ops/sampler.h"

namespace vkspec::ref {

struct SamplerResult {
  std::vector<float> probs;      // [rows, vocab]
  std::vector<uint32_t> tokens;  // [rows]; empty when mode is None
};

// logits: [rows, vocab], or [2 * rows, vocab] with CFG; positions: [rows] (may be empty when the
// mode draws no random numbers).
SamplerResult sampler(const std::vector<float>& logits, uint32_t vocab, const std::vector<uint32_t>& positions,
                      const ops::SamplerParams& params);

}  // namespace vkspec::ref
