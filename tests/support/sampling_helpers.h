#pragma once
// Helpers for the statistical sampling tests: many draws are many rows of one dispatch, each row
// a copy of the same logits at its own position (so its own random numbers).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/checks/op_check.h"
#include "engine/vk/context.h"

namespace vkspec::testing {

inline std::vector<float> replicate_rows(const std::vector<float>& row, uint32_t n) {
  std::vector<float> out;
  out.reserve(row.size() * n);
  for (uint32_t r = 0; r < n; ++r) out.insert(out.end(), row.begin(), row.end());
  return out;
}

inline Tensor upload_u32(Context& ctx, const std::vector<uint32_t>& v, const std::string& name) {
  Tensor t = ctx.tensor(DType::U32, {static_cast<int64_t>(v.size())}, name);
  ctx.upload(t, v.data(), v.size() * 4);
  return t;
}

inline std::vector<uint32_t> download_u32(Context& ctx, const Tensor& t) {
  std::vector<uint32_t> v(static_cast<size_t>(t.numel()));
  ctx.download(t, v.data(), v.size() * 4);
  return v;
}

inline std::vector<uint32_t> iota_positions(uint32_t n, uint32_t first = 0) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = first + i;
  return v;
}

// Counts of each token; tokens >= vocab are counted in the extra last bin.
inline std::vector<uint64_t> histogram(const std::vector<uint32_t>& tokens, uint32_t vocab) {
  std::vector<uint64_t> h(vocab + 1);
  for (uint32_t t : tokens) ++h[t < vocab ? t : vocab];
  return h;
}

// Row r of a downloaded [rows, vocab] f32 tensor, widened.
inline std::vector<double> row_of(const std::vector<float>& m, uint32_t vocab, uint32_t r = 0) {
  return std::vector<double>(m.begin() + size_t{r} * vocab, m.begin() + size_t{r + 1} * vocab);
}

}  // namespace vkspec::testing
