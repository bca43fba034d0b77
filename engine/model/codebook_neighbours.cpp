#include "engine/model/codebook_neighbours.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "engine/ops/philox.h"
#include "engine/vk/cache_file.h"
#include "engine/vk/context.h"
#include "common/error.h"

namespace vkspec {
namespace {

// Version 2: the metric joined the header (version 1 files are ignored and rewritten).
constexpr char kMagic[8] = {'V', 'K', 'S', 'P', 'N', 'B', 'R', '2'};

struct Header {
  char magic[8];
  uint64_t hash, entries, k_max, metric;
};

// The random metric's Philox key: one fixed seed, the row as the position, so the table is a
// pure function of the codebook size (its values do not matter) and the same everywhere.
constexpr uint64_t kRandomSeed = 0x4C414E5445524EULL;  // "LANTERN"
constexpr uint32_t kRandomPurpose = philox::purpose_word(philox::Purpose::Neighbours);

// Row x of the random metric: x, then the other entries in a Fisher-Yates order drawn from
// Philox stream (kRandomSeed, x); only the first k are drawn.
void random_row(int64_t x, int64_t entries, int64_t k, std::vector<uint32_t>& order) {
  std::iota(order.begin(), order.end(), 0u);
  std::swap(order[0], order[static_cast<size_t>(x)]);
  for (int64_t m = 1; m < k; ++m) {
    const uint64_t left = static_cast<uint64_t>(entries - m);
    const uint32_t bits = philox::bits(kRandomSeed, static_cast<uint32_t>(x), kRandomPurpose, static_cast<uint32_t>(m));
    const int64_t pick = m + static_cast<int64_t>((bits * left) >> 32);  // uniform in [m, entries) up to 2^-32
    std::swap(order[static_cast<size_t>(m)], order[static_cast<size_t>(pick)]);
  }
}

// Distances from row x to every row, smaller = nearer. L2: squared distance between the raw rows.
// Cosine: 1 - cos (the order of L2 between the rows scaled to unit length, 2 - 2 cos); an all-zero
// row has cos 0 with every row, so distance exactly 1.
void distances_from(const std::vector<float>& codebook, const std::vector<double>& norms, int64_t x, int64_t entries,
                    int64_t dim, NeighbourMetric metric, std::vector<double>& dist) {
  const float* cx = codebook.data() + x * dim;
  for (int64_t y = 0; y < entries; ++y) {
    const float* cy = codebook.data() + y * dim;
    double d = 0;
    if (metric == NeighbourMetric::Cosine) {
      const double n = norms[static_cast<size_t>(x)] * norms[static_cast<size_t>(y)];
      for (int64_t i = 0; i < dim; ++i) d += static_cast<double>(cx[i]) * static_cast<double>(cy[i]);
      d = n > 0 ? 1.0 - d / n : 1.0;
    } else {
      for (int64_t i = 0; i < dim; ++i) {
        const double t = static_cast<double>(cx[i]) - static_cast<double>(cy[i]);
        d += t * t;
      }
    }
    dist[static_cast<size_t>(y)] = d;
  }
}

}  // namespace

NeighbourMetric parse_neighbour_metric(const std::string& name) {
  std::string known;
  for (int m = 0; m < kNeighbourMetricCount; ++m) {
    if (name == kNeighbourMetricNames[static_cast<size_t>(m)]) return static_cast<NeighbourMetric>(m);
    known += std::string(m ? ", " : "") + kNeighbourMetricNames[static_cast<size_t>(m)];
  }
  throw Error("unknown neighbour metric '" + name + "' (known: " + known + ")");
}

std::vector<uint32_t> CodebookNeighbours::compute(const std::vector<float>& codebook, int64_t entries, int64_t dim,
                                                  int64_t k_max, NeighbourMetric metric) {
  if (entries < 1 || dim < 1 || static_cast<int64_t>(codebook.size()) != entries * dim)
    throw Error("codebook neighbours: codebook of " + std::to_string(codebook.size()) + " values is not [" +
                std::to_string(entries) + ", " + std::to_string(dim) + "]");
  if (entries > (int64_t{1} << 32)) throw Error("codebook neighbours: more than 2^32 entries");
  const int64_t k = std::clamp<int64_t>(k_max, 1, entries);
  std::vector<uint32_t> table(static_cast<size_t>(entries * k));
  std::vector<uint32_t> order(static_cast<size_t>(entries));
  if (metric == NeighbourMetric::Random) {
    for (int64_t x = 0; x < entries; ++x) {
      random_row(x, entries, k, order);
      std::copy(order.begin(), order.begin() + k, table.begin() + x * k);
    }
    return table;
  }
  std::vector<double> norms(static_cast<size_t>(entries), 0.0);
  for (int64_t x = 0; x < entries; ++x) {
    for (int64_t i = 0; i < dim; ++i) {
      const double v = codebook[static_cast<size_t>(x * dim + i)];
      norms[static_cast<size_t>(x)] += v * v;
    }
    norms[static_cast<size_t>(x)] = std::sqrt(norms[static_cast<size_t>(x)]);
  }
  std::vector<double> dist(static_cast<size_t>(entries));
  for (int64_t x = 0; x < entries; ++x) {
    distances_from(codebook, norms, x, entries, dim, metric, dist);
    std::iota(order.begin(), order.end(), 0u);
    // x first even when another entry has the same vector.
    std::swap(order[0], order[static_cast<size_t>(x)]);
    auto closer = [&](uint32_t a, uint32_t b) { return dist[a] != dist[b] ? dist[a] < dist[b] : a < b; };
    std::partial_sort(order.begin() + 1, order.begin() + k, order.end(), closer);
    std::copy(order.begin(), order.begin() + k, table.begin() + x * k);
  }
  return table;
}

namespace {

std::vector<float> host_codebook(Context& ctx, const Tokenizer& tokenizer) {
  std::vector<float> c(static_cast<size_t>(tokenizer.codebook().numel()));
  ctx.download(tokenizer.codebook(), c.data(), c.size() * 4);
  return c;
}

}  // namespace

CodebookNeighbours::CodebookNeighbours(Context& ctx, const Tokenizer& tokenizer, int64_t k_max, NeighbourMetric metric)
    : CodebookNeighbours(ctx, host_codebook(ctx, tokenizer), tokenizer.codebook().shape()[0],
                         tokenizer.codebook().shape()[1], k_max, tokenizer.path(), metric) {}

CodebookNeighbours::CodebookNeighbours(Context& ctx, const std::vector<float>& codebook, int64_t entries, int64_t dim,
                                       int64_t k_max, const std::string& source, NeighbourMetric metric)
    : metric_(metric) {
  if (entries < 1 || dim < 1 || static_cast<int64_t>(codebook.size()) != entries * dim)
    throw Error("codebook neighbours of " + source + ": " + std::to_string(codebook.size()) + " values are not [" +
                std::to_string(entries) + ", " + std::to_string(dim) + "]");
  entries_ = entries;
  k_max_ = std::clamp<int64_t>(k_max, 1, entries_);
  Header want{};
  std::memcpy(want.magic, kMagic, 8);
  want.hash = cache_hash(codebook.data(), codebook.size() * 4, cache_hash(&dim, sizeof(dim)));
  want.entries = static_cast<uint64_t>(entries_);
  want.k_max = static_cast<uint64_t>(k_max_);
  want.metric = static_cast<uint64_t>(metric_);
  const size_t table_bytes = static_cast<size_t>(entries_ * k_max_) * 4;

  std::vector<uint32_t> table;
  const std::string& dir = ctx.options().cache_dir;
  if (!dir.empty()) {
    char name[96];
    std::snprintf(name, sizeof(name), "/neighbours-%016llx-k%lld-%s.bin", static_cast<unsigned long long>(want.hash),
                  static_cast<long long>(k_max_), neighbour_metric_name(metric_));
    cache_path_ = dir + name;
    const std::vector<char> data = read_cache_file(cache_path_);
    // A damaged or foreign file is ignored and rewritten; its entries are range-checked too.
    if (data.size() == sizeof(Header) + table_bytes && std::memcmp(data.data(), &want, sizeof(Header)) == 0) {
      table.resize(table_bytes / 4);
      std::memcpy(table.data(), data.data() + sizeof(Header), table_bytes);
      from_cache_ =
          std::all_of(table.begin(), table.end(), [&](uint32_t v) { return v < static_cast<uint32_t>(entries_); });
      if (!from_cache_) table.clear();
    }
  }
  if (table.empty()) {
    table = compute(codebook, entries_, dim, k_max_, metric_);
    if (!cache_path_.empty()) {
      std::vector<char> data(sizeof(Header) + table_bytes);
      std::memcpy(data.data(), &want, sizeof(Header));
      std::memcpy(data.data() + sizeof(Header), table.data(), table_bytes);
      write_cache_file(cache_path_, data.data(), data.size());
    }
  }
  table_ = ctx.tensor(DType::U32, {entries_, k_max_},
                      std::string("codebook neighbours (") + neighbour_metric_name(metric_) + ") of " + source);
  ctx.upload(table_, table.data(), table_bytes);
}

}  // namespace vkspec
