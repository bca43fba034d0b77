#include "engine/ref/draft_tokens_ref.h"

#include <algorithm>
#include <cfloat>
#include <numeric>

#include "engine/ops/attention_mask.h"
#include "engine/ops/det_math.h"

namespace vkspec::ref {

TopTokens top_tokens(const std::vector<float>& q, uint32_t vocab, uint32_t k) {
  const size_t rows = q.size() / vocab;
  TopTokens out{std::vector<uint32_t>(rows * k, 0xFFFFFFFFu), std::vector<float>(rows * k, 0.0f)};
  std::vector<uint32_t> ids(vocab);
  for (size_t j = 0; j < rows; ++j) {
    const float* row = q.data() + j * vocab;
    std::iota(ids.begin(), ids.end(), 0u);
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                      [&](uint32_t a, uint32_t b) { return row[a] != row[b] ? row[a] > row[b] : a < b; });
    for (uint32_t r = 0; r < k && row[ids[r]] > 0.0f; ++r) {
      out.tokens[j * k + r] = ids[r];
      out.values[j * k + r] = row[ids[r]];
    }
  }
  return out;
}

std::vector<float> point_masses(const std::vector<uint32_t>& tokens, uint32_t vocab) {
  std::vector<float> out(tokens.size() * vocab, 0.0f);
  for (size_t j = 0; j < tokens.size(); ++j)
    if (tokens[j] < vocab) out[j * vocab + tokens[j]] = 1.0f;
  return out;
}

TreeLevelResult draft_tree_level(const std::vector<uint32_t>& cand_tokens, const std::vector<float>& cand_values,
                                 std::vector<uint32_t> state, const TreeLevelArgs& a) {
  auto at = [&](uint32_t level, uint32_t row) { return size_t{(level * a.k + row) * a.state_width}; };
  std::vector<std::pair<float, uint32_t>> cands;  // (value, c) of every candidate
  for (uint32_t c = 0; c < a.m * a.kc; ++c) {
    const size_t s = at(a.level, c / a.kc);
    if (state[s + 1] == 0 || cand_tokens[c] == 0xFFFFFFFFu) continue;
    const float v = det::bits_float(state[s]) * cand_values[c];
    cands.push_back({v >= FLT_MIN ? v : 0.0f, c});
  }
  std::stable_sort(cands.begin(), cands.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  TreeLevelResult r;
  r.choice.assign(a.k, 0xFFFFFFFFu);
  r.tokens.assign(a.k, 0xFFFFFFFFu);
  r.gather_ids.assign(size_t{a.rows} * a.k, 0);
  ops::AttentionMaskBuilder mb(a.k, int64_t{a.words} * 32);
  for (uint32_t j = 0; j < a.k; ++j) {
    const bool ok = j < cands.size();
    const uint32_t c = ok ? cands[j].second : 0xFFFFFFFFu, i = ok ? c / a.kc : 0;
    const size_t in = at(a.level, i), out = at(a.level + 1, j);
    r.choice[j] = c;
    r.tokens[j] = ok ? cand_tokens[c] : 0xFFFFFFFFu;
    state[out] = det::float_bits(ok ? cands[j].first : 0.0f);
    state[out + 1] = ok ? 1 : 0;
    for (uint32_t l = 0; l < a.level; ++l) state[out + 2 + l] = state[in + 2 + l];
    state[out + 2 + a.level] = j;
    for (uint32_t b = 0; b < a.rows; ++b) r.gather_ids[size_t{b} * a.k + j] = b * a.row_stride + a.g_base + i;
    for (uint32_t s = a.lo; s < a.hi; ++s) mb.see(j, s);
    for (uint32_t l = 0; l <= a.level; ++l) mb.see(j, a.scratch0 + l * a.k + state[out + 2 + l]);
  }
  const ops::PackedAttentionMask packed = mb.pack();
  r.ranges = packed.ranges;
  r.bits = packed.bits.empty() ? std::vector<uint32_t>(size_t{a.k} * a.words, 0) : packed.bits;
  r.state = std::move(state);
  return r;
}

}  // namespace vkspec::ref
