#pragma once
// CPU reference for rope_2d (tests and --check modes only).
#include <cstdint>
#include <vector>

namespace vkspec::ref {

// x: [tokens, heads, head_dim]; positions: [P, 3] (row, col, flag), token n uses n % P;
// table: [n_pos, head_dim / 4, 2] from ops::rope_2d_cos_sin. Mirrors LlamaGen's apply_rotary_emb.
std::vector<float> rope_2d(const std::vector<float>& x, int64_t tokens, int64_t heads, int64_t head_dim,
                           const std::vector<int32_t>& positions, const std::vector<float>& table);

// LlamaGen's precompute_freqs_cis_2d evaluated directly in double for one (coordinate, pair):
// used to check the f32 table. Returns the angle coord * f_j.
double rope_2d_angle(int64_t head_dim, int64_t coord, int64_t j, double base);

}  // namespace vkspec::ref
