#pragma once
// CPU reference for attention and kv_write (tests and --check modes only).
#include <cstdint>
#include <vector>

namespace vkspec::ref {

struct AttentionDims {
  int64_t batch = 1, tokens = 1, slots = 1, heads = 1, head_dim = 1;
};

// q: [B, T, H, Dh]; k, v: [B, S, H, Dh]; visible: [T, S] shared by the batch rows or [B, T, S]
// (nonzero = visible). Only visible slots < kv_len are read; softmax in double. A query that sees
// nothing yields zeros. Returns [B, T, H, Dh].
std::vector<float> attention(const AttentionDims& d, const std::vector<float>& q, const std::vector<float>& k,
                             const std::vector<float>& v, const std::vector<uint8_t>& visible, int64_t kv_len,
                             float scale);

// cache [B, S, H, Dh] gets rows of src [B * T, H, Dh] at slots[t] (shared) or slots[b * T + t];
// slots >= S are skipped.
void kv_write(const AttentionDims& d, const std::vector<float>& src, const std::vector<uint32_t>& slots,
              std::vector<float>& cache);

}  // namespace vkspec::ref
