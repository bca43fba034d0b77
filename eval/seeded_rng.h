#pragma once
// Deterministic random draws for resampling (bootstrap, FID-infinity's subsets, precision and
// recall's reference subset): the same numbers on every platform and standard library, which
// std::uniform_int_distribution does not promise. SplitMix64 (Steele, Lea & Flood 2014).
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace vkspec {

class SeededRng {
 public:
  explicit SeededRng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (n >= 1): the high half of a 64 x 64-bit product (Lemire), bias below 2^-40
  // for the n used here.
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }
  // `count` distinct indices of [0, n), in the order drawn (partial Fisher-Yates).
  std::vector<int64_t> subset(int64_t n, int64_t count) {
    std::vector<int64_t> idx(static_cast<size_t>(n));
    std::iota(idx.begin(), idx.end(), int64_t{0});
    for (int64_t i = 0; i < count && i < n; ++i) {
      const int64_t j = i + static_cast<int64_t>(below(static_cast<uint64_t>(n - i)));
      std::swap(idx[static_cast<size_t>(i)], idx[static_cast<size_t>(j)]);
    }
    idx.resize(static_cast<size_t>(count < n ? count : n));
    return idx;
  }

 private:
  uint64_t state_;
};

}  // namespace vkspec
