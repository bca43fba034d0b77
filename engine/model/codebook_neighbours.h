#pragma once
// The nearest codebook entries of every entry: row x lists x itself, then the other entries by
// increasing L2 distance between the raw codebook vectors (ties: lower index first). LANTERN's
// latent neighbourhoods and MuLo-SD's pooled acceptance read it on the device (ops::pooled_prob,
// ops::relax_neighbourhood). Only the first k_max entries of each row are kept; the table is
// computed once per codebook and cached in ContextOptions::cache_dir, keyed by a hash of the
// codebook values and k_max.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/tokenizer.h"

namespace vkspec {

class CodebookNeighbours {
 public:
  // The default row length: LANTERN's default k (1000) fits, and a LlamaGen VQ-16 table (16384
  // rows) stays at 64 MiB.
  static constexpr int64_t kDefaultMax = 1024;

  // k_max is clamped to the codebook size.
  CodebookNeighbours(Context& ctx, const Tokenizer& tokenizer, int64_t k_max = kDefaultMax);
  // From a host codebook [entries, dim] row-major; `source` names it in the tensor's name.
  CodebookNeighbours(Context& ctx, const std::vector<float>& codebook, int64_t entries, int64_t dim, int64_t k_max,
                     const std::string& source);

  // The table for a host codebook [entries, dim], row-major u32 [entries, min(k_max, entries)].
  static std::vector<uint32_t> compute(const std::vector<float>& codebook, int64_t entries, int64_t dim,
                                       int64_t k_max);

  int64_t entries() const { return entries_; }
  int64_t k_max() const { return k_max_; }
  const Tensor& table() const { return table_; }  // u32 [entries, k_max]
  bool loaded_from_cache() const { return from_cache_; }
  const std::string& cache_path() const { return cache_path_; }  // "" when caching is off

 private:
  int64_t entries_ = 0, k_max_ = 0;
  bool from_cache_ = false;
  std::string cache_path_;
  Tensor table_;
};

}  // namespace vkspec
