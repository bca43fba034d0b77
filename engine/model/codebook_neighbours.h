#pragma once
// The nearest codebook entries of every entry: row x lists x itself, then the other entries from
// nearest to farthest under a NeighbourMetric (ties: lower index first): L2 distance between the
// raw codebook vectors (the default), cosine similarity (an all-zero row has cos 0 with every
// row), or a random order (Philox keyed
// by the row; the same table on every run and machine). LANTERN's latent neighbourhoods and
// MuLo-SD's pooled acceptance read it on the device (ops::pooled_prob, ops::relax_neighbourhood).
// Only the first k_max entries of each row are kept; the table is computed once per codebook and
// metric and cached in ContextOptions::cache_dir, keyed by a hash of the codebook values, the
// metric and k_max.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/neighbour_metric.h"
#include "engine/model/tokenizer.h"

namespace vkspec {

class CodebookNeighbours {
 public:
  // The default row length: LANTERN's default k (1000) fits, and a LlamaGen VQ-16 table (16384
  // rows) stays at 64 MiB.
  static constexpr int64_t kDefaultMax = 1024;

  // k_max is clamped to the codebook size.
  CodebookNeighbours(Context& ctx, const Tokenizer& tokenizer, int64_t k_max = kDefaultMax,
                     NeighbourMetric metric = NeighbourMetric::L2);
  // From a host codebook [entries, dim] row-major; `source` names it in the tensor's name.
  CodebookNeighbours(Context& ctx, const std::vector<float>& codebook, int64_t entries, int64_t dim, int64_t k_max,
                     const std::string& source, NeighbourMetric metric = NeighbourMetric::L2);

  // The table for a host codebook [entries, dim], row-major u32 [entries, min(k_max, entries)].
  static std::vector<uint32_t> compute(const std::vector<float>& codebook, int64_t entries, int64_t dim, int64_t k_max,
                                       NeighbourMetric metric = NeighbourMetric::L2);

  int64_t entries() const { return entries_; }
  int64_t k_max() const { return k_max_; }
  NeighbourMetric metric() const { return metric_; }
  const Tensor& table() const { return table_; }  // u32 [entries, k_max]
  bool loaded_from_cache() const { return from_cache_; }
  const std::string& cache_path() const { return cache_path_; }  // "" when caching is off

 private:
  int64_t entries_ = 0, k_max_ = 0;
  NeighbourMetric metric_ = NeighbourMetric::L2;
  bool from_cache_ = false;
  std::string cache_path_;
  Tensor table_;
};

}  // namespace vkspec
