#pragma once
// The VQ AttnBlock's core: single-head attention over the H*W positions of each image,
//   out = softmax(q k^T * scale) v      (softmax over keys, scale = 1/sqrt(C) by default)
// q, k, v, out: f32, all the same shape, [N, HW, C], or [N, H, W, C] / [HW, C] (the same memory:
// the outputs of the 1x1 q/k/v convs in conv2d's channel-last layout). Online softmax: no
// [HW, HW] score matrix is stored. out must not overlap q, k or v.
#include <cstdint>

#include "engine/vk/command_stream.h"
#include "engine/vk/context.h"

namespace vkspec::ops {

// Each invocation owns `queries` query rows and walks the keys `keys` at a time (queries x keys
// scores in registers). With subgroup_kv the lanes of a subgroup load each key/value element
// once between them and exchange them by shuffles to constant lanes, and every access moves two channels
// in 64 bits (CPU drivers load lane by lane, at a cost per access); it needs C even, shaderInt64
// and subgroup ballot in compute shaders, and is ignored otherwise.
struct SpatialAttentionKernel {
  uint32_t queries = 4;  // 1 to 8
  uint32_t keys = 16;    // 1 to 32
  bool subgroup_kv = false;
  // GPUs: one workgroup per query (spatial_attention_rows.comp), where the device reduces across
  // subgroups and the scores of one query fit in shared memory; queries / keys / subgroup_kv are
  // then unused. Elsewhere the kernel above runs.
  bool per_query = false;
};

SpatialAttentionKernel spatial_attention_default_kernel(const Context& ctx);
// Whether `kernel` runs as the per-query kernel for n images of hw positions on this device.
bool spatial_attention_per_query(const Context& ctx, int64_t n, int64_t hw, const SpatialAttentionKernel& kernel);

// scale <= 0 selects 1/sqrt(C).
void spatial_attention(CommandStream& s, const TensorView& q, const TensorView& k, const TensorView& v,
                       const TensorView& out, float scale = 0.0f);
void spatial_attention(CommandStream& s, const TensorView& q, const TensorView& k, const TensorView& v,
                       const TensorView& out, float scale, const SpatialAttentionKernel& kernel);

}  // namespace vkspec::ops
