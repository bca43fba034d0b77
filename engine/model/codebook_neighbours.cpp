#include "engine/model/codebook_neighbours.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "engine/vk/cache_file.h"
#include "engine/vk/context.h"
#include "common/error.h"

namespace vkspec {
namespace {

constexpr char kMagic[8] = {'V', 'K', 'S', 'P', 'N', 'B', 'R', '1'};

struct Header {
  char magic[8];
  uint64_t hash, entries, k_max;
};

}  // namespace

std::vector<uint32_t> CodebookNeighbours::compute(const std::vector<float>& codebook, int64_t entries, int64_t dim,
                                                  int64_t k_max) {
  if (entries < 1 || dim < 1 || static_cast<int64_t>(codebook.size()) != entries * dim)
    throw Error("codebook neighbours: codebook of " + std::to_string(codebook.size()) + " values is not [" +
                std::to_string(entries) + ", " + std::to_string(dim) + "]");
  const int64_t k = std::clamp<int64_t>(k_max, 1, entries);
  std::vector<uint32_t> table(static_cast<size_t>(entries * k));
  std::vector<double> dist(static_cast<size_t>(entries));
  std::vector<uint32_t> order(static_cast<size_t>(entries));
  for (int64_t x = 0; x < entries; ++x) {
    const float* cx = codebook.data() + x * dim;
    for (int64_t y = 0; y < entries; ++y) {
      const float* cy = codebook.data() + y * dim;
      double d = 0;
      for (int64_t i = 0; i < dim; ++i) {
        const double t = static_cast<double>(cx[i]) - static_cast<double>(cy[i]);
        d += t * t;
      }
      dist[static_cast<size_t>(y)] = d;
    }
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

CodebookNeighbours::CodebookNeighbours(Context& ctx, const Tokenizer& tokenizer, int64_t k_max)
    : CodebookNeighbours(ctx, host_codebook(ctx, tokenizer), tokenizer.codebook().shape()[0],
                         tokenizer.codebook().shape()[1], k_max, tokenizer.path()) {}

CodebookNeighbours::CodebookNeighbours(Context& ctx, const std::vector<float>& codebook, int64_t entries, int64_t dim,
                                       int64_t k_max, const std::string& source) {
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
  const size_t table_bytes = static_cast<size_t>(entries_ * k_max_) * 4;

  std::vector<uint32_t> table;
  const std::string& dir = ctx.options().cache_dir;
  if (!dir.empty()) {
    char name[64];
    std::snprintf(name, sizeof(name), "/neighbours-%016llx-k%lld.bin", static_cast<unsigned long long>(want.hash),
                  static_cast<long long>(k_max_));
    cache_path_ = dir + name;
    const std::vector<char> data = read_cache_file(cache_path_);
    // A damaged or foreign file is ignored and rewritten; its entries are range-checked too.
    if (data.size() == sizeof(Header) + table_bytes && std::memcmp(data.data(), &want, sizeof(Header)) == 0) {
      table.resize(table_bytes / 4);
      std::memcpy(table.data(), data.data() + sizeof(Header), table_bytes);
      from_cache_ = std::all_of(table.begin(), table.end(),
                                [&](uint32_t v) { return v < static_cast<uint32_t>(entries_); });
      if (!from_cache_) table.clear();
    }
  }
  if (table.empty()) {
    table = compute(codebook, entries_, dim, k_max_);
    if (!cache_path_.empty()) {
      std::vector<char> data(sizeof(Header) + table_bytes);
      std::memcpy(data.data(), &want, sizeof(Header));
      std::memcpy(data.data() + sizeof(Header), table.data(), table_bytes);
      write_cache_file(cache_path_, data.data(), data.size());
    }
  }
  table_ = ctx.tensor(DType::U32, {entries_, k_max_}, "codebook neighbours of " + source);
  ctx.upload(table_, table.data(), table_bytes);
}

}  // namespace vkspec
