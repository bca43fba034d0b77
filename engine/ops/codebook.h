#pragma once
// The VQ tokenizer's codebook (LlamaGen VectorQuantizer with l2-normalised codes), f32:
//   codebook [n_e, e_dim]            rows as stored in the checkpoint (normalised here, on use)
//   ids      [N, H, W] (any shape)   u32 (lookup also takes i32)
//   latents  [N, H, W, e_dim]        f32 channel-last: the decoder's input / encoder's output
#include <cstdint>

#include "engine/vk/command_stream.h"
#include "engine/vk/context.h"

namespace vkspec::ops {

// out[..., :] = codebook[id] / max(|codebook[id]|, 1e-12) (F.normalize). out's shape is ids'
// shape plus e_dim (any shape with that many elements is accepted). An id >= n_e (or negative)
// yields a row of NaN.
void codebook_lookup(CommandStream& s, const TensorView& ids, const TensorView& codebook, const TensorView& out);

// ids[...] = argmin_i |z/|z| - e_i/|e_i||  = argmax_i dot(z, e_i) / |e_i|, z = latents[..., :].
// Ties (equal scores in f32) go to the lowest index; z = 0 gives id 0. ids' element count is
// latents' divided by e_dim. e_dim up to 64.
void codebook_quantize(CommandStream& s, const TensorView& latents, const TensorView& codebook, const TensorView& ids);

// With subgroup_codes the lanes of a subgroup load each block of codes once between them and
// exchange them by shuffles to constant lanes (CPU drivers load lane by lane).
struct CodebookQuantizeKernel {
  uint32_t codes = 4;  // codes per block, 1 to 16
  bool subgroup_codes = false;
};
CodebookQuantizeKernel codebook_quantize_default_kernel(const Context& ctx);
void codebook_quantize(CommandStream& s, const TensorView& latents, const TensorView& codebook, const TensorView& ids,
                       const CodebookQuantizeKernel& kernel);

}  // namespace vkspec::ops
