#pragma once
// CPU reference for ops::codebook_lookup / codebook_quantize (double arithmetic).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkspec::ref {

// Normalised rows codebook[id] / max(|row|, 1e-12) for each id; ids >= n_e give NaN rows.
std::vector<float> codebook_lookup(const std::vector<uint32_t>& ids, const std::vector<float>& codebook, int64_t e_dim);

// Cosine similarity of latent z (e_dim values) with every code: dot(z, e) / (|z| |e|) (0 where
// either is 0).
std::vector<double> codebook_scores(const float* z, const std::vector<float>& codebook, int64_t e_dim);

// argmax of codebook_scores per latent; the lowest index among equal scores.
std::vector<uint32_t> codebook_quantize(const std::vector<float>& latents, const std::vector<float>& codebook,
                                        int64_t e_dim);

}  // namespace vkspec::ref
