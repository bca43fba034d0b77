#pragma once
// GroupNorm for the VQ tokenizer (LlamaGen's Normalize: 32 groups, eps 1e-6, affine), with the
// swish that follows every GroupNorm there except the attention block's fused in.
//
//   x, y         [N, H, W, C]  f32 channel-last (see conv2d.h); y may be x (in place)
//   gamma, beta  [C]           f32
// Group g holds channels [g * C / groups, (g + 1) * C / groups) of every pixel of one image.
// y = (x - mean_g) / sqrt(var_g + eps) * gamma + beta, with the biased variance (as PyTorch);
// with swish, y = v * sigmoid(v) of that.
#include <cstdint>

#include "engine/vk/command_stream.h"

namespace vkspec::ops {

struct GroupNormParams {
  uint32_t groups = 32;
  float eps = 1e-6f;
  bool swish = false;
};

// One workgroup per (image, group). Its sums are combined by subgroupAdd then a shared array
// (where the device has subgroup arithmetic), or by a shared-memory tree.
struct GroupNormKernel {
  bool subgroup_reduce = true;
  // 0: the device's choice (one subgroup on CPU drivers, 256 elsewhere); else a power of two
  // from the subgroup size to 1024.
  uint32_t workgroup_size = 0;
};

void group_norm(CommandStream& s, const TensorView& x, const TensorView& gamma, const TensorView& beta,
                const TensorView& y, const GroupNormParams& params = {});
void group_norm(CommandStream& s, const TensorView& x, const TensorView& gamma, const TensorView& beta,
                const TensorView& y, const GroupNormParams& params, const GroupNormKernel& kernel);

}  // namespace vkspec::ops
