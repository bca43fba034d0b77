#pragma once
// A drafter's candidates chosen on the device, so a draft tree whose shape does not wait on them
// is recorded in one submit (decoding/eagle_strategy.h): each row's most likely tokens, and the
// point masses the tree tests then read. Bit-equal with ref::top_tokens / ref::point_masses.
#include <cstdint>

#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// The most tokens top_tokens ranks per row (EAGLE's --topk bound).
constexpr uint32_t kMaxTopTokens = 64;

// For each row j of q (f32 [N, V], probabilities >= 0): its k most likely tokens in rank order, q
// descending with ties to the smaller id (DraftTreeBuilder's order), tokens[j][r] and
// values[j][r] = q[j][tokens[j][r]]. From the first rank whose q is not > 0 on (fewer than k
// tokens have mass, as after a top-k or top-p filter) every entry is tokens = kNoToken (0xFFFFFFFF),
// values = 0. tokens: u32/i32 [N, k]; values: f32 [N, k]; 1 <= k <= min(V, kMaxTopTokens).
void top_tokens(CommandStream& s, const TensorView& q, uint32_t k, const TensorView& tokens, const TensorView& values);

// out[j] = the point mass on tokens[j]: 0 everywhere but 1.0 at tokens[j]; all 0 where tokens[j]
// >= V (kNoToken: no candidate). tokens: u32/i32 [N]; out: f32 [N, V].
void point_masses(CommandStream& s, const TensorView& tokens, const TensorView& out);

}  // namespace vkspec::ops
