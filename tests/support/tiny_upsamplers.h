#pragma once
// Random MuLo-SD upsampler files written from C++ (no PyTorch needed), in the layout
// tools/vkspec_models.py SRNet / LatentUpsampler export: for the strategy tests that only need
// some deterministic upsampler of the right shape (parity with PyTorch is test_mulo_upsamplers).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/safetensors_writer.h"
#include "tests/support/tiny_gpt.h"

namespace vkspec::testing {

inline std::vector<float> tiny_normals(TinyNormal& g, int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = scale * g.next();
  return v;
}

inline void write_tiny_sr_net(const std::string& path, int64_t scale, int64_t channels, int64_t depth, uint64_t seed) {
  TinyNormal g(seed);
  SafetensorsWriter w;
  int64_t cin = 1;
  for (int64_t i = 0; i < depth; ++i) {
    const int64_t cout = i + 1 < depth ? channels : scale * scale;
    const std::string p = "convs." + std::to_string(i);
    w.add_f32(p + ".weight", {cout, cin, 3, 3}, tiny_normals(g, cout * cin * 9, 0.2f));
    w.add_f32(p + ".bias", {cout}, tiny_normals(g, cout, 0.05f));
    cin = channels;
  }
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{{"vkspec.kind", "sr_net"},
                                                                             {"scale", std::to_string(scale)},
                                                                             {"channels", std::to_string(channels)},
                                                                             {"depth", std::to_string(depth)},
                                                                             {"in_channels", "1"},
                                                                             {"activation", "silu"},
                                                                             {"residual", "nearest"}})
    w.set_metadata(k, v);
  w.write(path);
}

// The row-causal mask applied: every tap on a kernel's bottom row is zero.
inline void write_tiny_latent_upsampler(const std::string& path, int64_t vocab, int64_t e_dim, int64_t ratio,
                                        int64_t channels, int64_t depth, uint64_t seed) {
  TinyNormal g(seed);
  SafetensorsWriter w;
  w.add_f32("embed.weight", {vocab, channels}, tiny_normals(g, vocab * channels, 1.0f));
  auto conv = [&](const std::string& p, int64_t cout) {
    std::vector<float> k = tiny_normals(g, cout * channels * 9, 0.3f);
    for (int64_t f = 0; f < cout * channels; ++f)
      for (int64_t col = 0; col < 3; ++col) k[static_cast<size_t>(f * 9 + 6 + col)] = 0.0f;
    w.add_f32(p + ".weight", {cout, channels, 3, 3}, k);
    w.add_f32(p + ".bias", {cout}, tiny_normals(g, cout, 0.05f));
  };
  for (int64_t i = 0; i < depth; ++i) conv("convs." + std::to_string(i), channels);
  conv("out", e_dim * ratio * ratio);
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{{"vkspec.kind", "latent_upsampler"},
                                                                             {"ratio", std::to_string(ratio)},
                                                                             {"vocab_size", std::to_string(vocab)},
                                                                             {"embed_dim", std::to_string(e_dim)},
                                                                             {"channels", std::to_string(channels)},
                                                                             {"depth", std::to_string(depth)},
                                                                             {"activation", "silu"},
                                                                             {"mask", "row_causal"}})
    w.set_metadata(k, v);
  w.write(path);
}

}  // namespace vkspec::testing
