#pragma once
// Multi-head attention of many queries against a KV cache, with per-query visibility.
//
// Shapes (B = batch rows, e.g. the two CFG rows; T = queries per batch row; S = cache slots):
//   q      head rows of B * T tokens (token n = b * T + t), H heads of head_dim (f32); may be the
//          q columns of the fused wqkv output: HeadRows::columns(qkv, 0, H, head_dim).
//   caches k_cache, v_cache: [B, S, H, head_dim], both f32 or both f16 (see kv_write).
//   out    f32 [B * T, H * head_dim] (any shape of that size), row n = b * T + t.
// scores = q . k * scale (scale 0 means 1 / sqrt(head_dim)); softmax over the visible slots.
//
// Visibility (AttentionMask), per query; the metadata rows are [T, ...] shared by all batch rows
// (CFG) or [B, T, ...] per batch row:
//   ranges u32 [T, 2] / [B, T, 2]: (dense_end, end). Slots [0, dense_end) are visible; slots
//          [dense_end, end) are visible where the query's bit is set; slots >= end never are.
//   bits   u32 [T, W] / [B, T, W], W = ceil(S / 32), or an empty view when every query is a plain
//          prefix (dense_end == end). Bit (s % 32) of word s / 32 is slot s; bits below
//          dense_end are ignored.
// This keeps the common case cheap (a causal prefix reads no mask at all; a speculative window is
// a prefix plus a few bits) and still expresses trees of candidates, ZipAR's parallel rows and
// arbitrary islands. A query with no visible slot gets zeros. A slot that no query of batch row b
// may see is never read for that row, so unwritten slots may hold garbage, NaN included.
// AttentionMaskBuilder (attention_mask.h) packs both tensors from per-query slot sets (or from a
// dense [T, S] matrix, one see() per visible slot).
//
// Kernel (shaders/attention_body.glsl): flash-style online softmax, scores stay in registers. A
// subgroup serves up to 16 queries per pass over the slots (each cache element loaded once per
// pass), lanes over head elements, one transposed butterfly per slot for all the pass's scores.
// Few queries (decode) split the slots across workgroups; the last split to finish a group of
// queries merges their partial softmax states, in the same dispatch. Needs subgroup shuffle and ballot in compute
// shaders; head_dim even and <= 256.
#include <cstdint>

#include "engine/ops/head_rows.h"
#include "engine/vk/device_caps.h"

namespace vkspec::ops {

struct AttentionMask {
  TensorView ranges;
  TensorView bits;  // buffer == VK_NULL_HANDLE: no bits
};

struct AttentionShape {
  int64_t batch = 1, tokens = 1, heads = 1, head_dim = 64;
  int64_t kv_len = 0;  // slots the op may read: every visible slot is < kv_len <= S
};

// How the kernel reads the caches. Wide: 64-bit words (needs shaderInt64, head_dim % 4 == 0 for
// f16, 8-byte aligned cache views); lavapipe pays per load component, so this halves its main
// cost. Narrow: 32-bit words, any device. Texel: f16 caches through their uniform texel views
// (head_dim % 4 == 0, caches starting on a texel of their view), one vector gather per load on
// CPU drivers. Auto: Texel on CPU drivers where possible, else Wide where possible.
enum class AttentionLoads { Auto, Wide, Narrow, Texel };
// Whether the device has what the loads need (shaderInt64 for Wide, texel buffers for Texel); the
// shape and alignment conditions above are the caller's.
bool attention_loads_available(const DeviceCaps& caps, AttentionLoads loads);

struct AttentionOptions {
  float scale = 0.0f;  // 0: 1 / sqrt(head_dim)
  AttentionLoads loads = AttentionLoads::Auto;
  // Workgroups the slots are split across (then combined); 0: chosen from the device and shape.
  // Either way no more than the workspace holds.
  uint32_t splits = 0;
  // Queries a subgroup takes per pass over the slots (QG): 0 chosen from the device and shape,
  // else a power of two up to 16 and the smallest subgroup size (kernel tuning, tests).
  uint32_t queries_per_pass = 0;
  // Batch rows the automatic split is planned for (0: the batch). A forward of several images
  // passes one image's rows, so that each row's sums take the same order whatever the number of
  // images sharing the forward (batched decoding gives the tokens of one image at a time).
  int64_t split_rows = 0;
  // Slots the split's chunks are cut for (0: kv_len); more chunks of that length cover a kv_len
  // past them. A forward passes its sequence's slots (KvCache::sequence_device_slots): the
  // chunks then move neither with the other images' kv_len in a batch nor with the scratch slots
  // a cache has (chunks past a query's last slot add exact zeros in the combine).
  int64_t split_slots = 0;
  // Queries the pass width, the workgroup and the split are planned for (0: the call's): a forward
  // of fewer queries than its strategy's most then sums each query in the same order.
  int64_t plan_tokens = 0;
};

// Workspace for splitting the slots across workgroups (decode, where few queries would otherwise
// leave the device idle). Monotone in kv_len: sizing for the largest S and each T in use is
// enough. A smaller (even empty) workspace is valid and only limits the splitting. It must be
// zero when made (attention_workspace) and then passed whole to every call that uses it: it
// holds the splits' arrival counters, which each call leaves at zero.
uint64_t attention_workspace_bytes(const Context& ctx, const AttentionShape& shape, const AttentionOptions& opt = {});
// The workspace that serves every forward of 1 .. shape.tokens queries (a model's activations are
// sized once for its largest batch).
uint64_t attention_workspace_bytes_up_to(const Context& ctx, const AttentionShape& shape,
                                         const AttentionOptions& opt = {});

// The workspace that serves every forward of 1 .. shape.tokens queries against a cache of any
// size (shape.kv_len is ignored): the split count stops growing at the device's target, so a
// model can make its workspace once, when it is loaded (a quarter more for the chunks of scratch
// slots past split_slots).
uint64_t attention_workspace_bytes_any_cache(const Context& ctx, AttentionShape shape,
                                             const AttentionOptions& opt = {});
// A zeroed workspace of at least `bytes` (an empty tensor for 0), zeroed by a submit of its own:
// made when a model loads, so that no image's work counters carry it.
Tensor attention_workspace(Context& ctx, uint64_t bytes, const std::string& name);

// One call's tensors, shaped as above.
struct Attention {
  HeadRows q;
  int64_t batch = 1;
  TensorView k_cache, v_cache;
  int64_t kv_len = 0;  // slots [0, kv_len) of the caches may be read (ends beyond it are clamped)
  AttentionMask mask;
  TensorView out;
  TensorView workspace;  // from attention_workspace (any shape), or an empty view
};
void attention(CommandStream& s, const Attention& a, const AttentionOptions& opt = {});

}  // namespace vkspec::ops
