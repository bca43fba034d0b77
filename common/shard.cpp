#include "common/shard.h"

#include <cctype>

#include "common/error.h"

namespace vkspec {
namespace {

// A non-negative decimal number without sign, spaces or leading '+'; -1 when it is not one.
int64_t digits(const std::string& s) {
  if (s.empty() || s.size() > 9) return -1;
  int64_t v = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

Shard parse_shard(const std::string& text, const std::string& what) {
  const size_t slash = text.find('/');
  const std::string expect = what + " expects I/N with 0 <= I < N <= " + std::to_string(kMaxShards) +
                             " (shard I of N, counted from 0), got '" + text + "'";
  if (slash == std::string::npos) throw Error(expect);
  const int64_t i = digits(text.substr(0, slash)), n = digits(text.substr(slash + 1));
  if (i < 0 || n < 1 || n > kMaxShards) throw Error(expect);
  if (i >= n)
    throw Error(what + " " + text + ": shard " + std::to_string(i) + " does not exist, the shards of " +
                std::to_string(n) + " are 0.." + std::to_string(n - 1) + " (a Slurm array --array=0-" +
                std::to_string(n - 1) + ")");
  return {i, n};
}

ImageBlock shard_block(int64_t images, const Shard& shard) {
  // i * n fits in 64 bits: n <= 1e7 images (the commands' limit), i < 1e6 shards.
  return {shard.index * images / shard.count, (shard.index + 1) * images / shard.count};
}

int64_t shard_of_image(int64_t k, int64_t images, int64_t count) {
  // The last i with floor(i * n / N) <= k; the division gives it or one less.
  int64_t i = ((k + 1) * count - 1) / images;
  while (i + 1 < count && (i + 1) * images / count <= k) ++i;
  while (i > 0 && i * images / count > k) --i;
  return i;
}

}  // namespace vkspec
