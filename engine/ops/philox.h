#pragma once
// Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random
// numbers: as easy as 1, 2, 3", SC'11). A draw is a pure function of its key, so the CPU, every
// GPU (shaders/philox.glsl gives the same bits) and every decoding strategy see the same number
// for the same event, and noise can be re-derived instead of stored.
//
// Key layout of draw `draw` for (seed, position, purpose):
//   Philox key     = (seed & 0xFFFFFFFF, seed >> 32)
//   Philox counter = (position, purpose word, draw >> 2, 0)
//   value          = output word (draw & 3) of that block
// so four consecutive draws share one block, and each (seed, position, purpose word) stream has
// 2^32 draws. `position` is whatever the caller numbers events by (the token's index in the
// image; batches of images fold the image into the seed or the position).
#include <array>
#include <cstdint>

#include "engine/ops/det_math.h"

namespace vkspec::philox {

// What a draw is for; distinct purposes give independent streams for the same position.
enum class Purpose : uint32_t {
  Sample = 1,    // the target's token at a position: inverse-CDF uniform (draw 0) or Gumbel noise (draw = vocab index)
  Accept = 2,    // acceptance uniform of a drafted token (draw 0)
  Residual = 3,  // resampling from norm(max(p - q, 0)) after a rejection (draw 0)
  DraftGumbel = 4,  // Gumbel noise shared by draft and target for coupled sampling (draw = vocab index)
  DraftInit = 5,    // initial guesses of parallel (Jacobi-style) decoders (draw 0, or vocab index for noise)
  Draft = 6,        // a draft model's own categorical sample (draw 0)
  DraftHead = 7,    // a draft head's sample for a later position (round = step * 8 + head)
  Couple = 8,       // partial coupling's coin: coupled or independent next draft (round = step, draw 0)
  Neighbours = 9,   // the random neighbour metric's order of a codebook row (host only; draw = rank)
  SkipPath = 10,    // vvs's draft path committed without verification (host only; round = step, draw 0)
  Test = 255,       // test-only streams
};

// The 32-bit purpose word: the purpose in the low 8 bits and a round (iteration, refinement
// step; < 2^24) above, so a strategy that revisits a position can take fresh draws per round or
// share them (same round) as it needs.
constexpr uint32_t purpose_word(Purpose p, uint32_t round = 0) { return static_cast<uint32_t>(p) | (round << 8); }

using Block = std::array<uint32_t, 4>;

inline Block philox4x32_10(Block c, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
  }
  return c;
}

// The block holding draws (draw & ~3) .. (draw | 3).
inline Block block(uint64_t seed, uint32_t position, uint32_t purpose, uint32_t draw) {
  return philox4x32_10({position, purpose, draw >> 2, 0u}, static_cast<uint32_t>(seed),
                       static_cast<uint32_t>(seed >> 32));
}

inline uint32_t bits(uint64_t seed, uint32_t position, uint32_t purpose, uint32_t draw) {
  return block(seed, position, purpose, draw)[draw & 3u];
}

// Uniform in [0, 1) from the top 24 bits: exactly k / 2^24, the same float everywhere.
inline float to_uniform(uint32_t x) { return static_cast<float>(x >> 8) * 5.96046448e-8f; }

// Gumbel(0, 1) variate -ln(-ln u); u = to_uniform(x), with u = 0 replaced by 2^-25 so both logs
// stay finite (range about [-2.85, 17.3]).
inline float to_gumbel(uint32_t x) {
  float u = to_uniform(x);
  if (u == 0.0f) u = 2.98023224e-8f;
  return -det::log_det(-det::log_det(u));
}

inline float uniform(uint64_t seed, uint32_t position, uint32_t purpose, uint32_t draw) {
  return to_uniform(bits(seed, position, purpose, draw));
}
inline float gumbel(uint64_t seed, uint32_t position, uint32_t purpose, uint32_t draw) {
  return to_gumbel(bits(seed, position, purpose, draw));
}

}  // namespace vkspec::philox
