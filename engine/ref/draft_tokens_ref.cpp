#include "engine/ref/draft_tokens_ref.h"

#include <algorithm>
#include <cfloat>
#include <numeric>

#include "engine/ops/attention_mask.h"
#include "engine/ops/det_math.h"
#include "engine/ops/rope.h"

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

namespace {

// The tree the cut keeps: per node (breadth first, the root at 0) its candidate (kNone for the root
// and padding) and its parent's row.
struct CutRows {
  std::vector<uint32_t> g;
  std::vector<int32_t> parent;
};

CutRows cut_rows(const std::vector<uint32_t>& cand_tokens, const std::vector<float>& cand_values,
                 const std::vector<uint32_t>& choice, const std::vector<uint32_t>& state, const TreeCutArgs& a) {
  const uint32_t none = 0xFFFFFFFFu, total = (1 + (a.levels - 1) * a.k) * a.kc, budget = a.out_rows - 1;
  auto level = [&](uint32_t R) { return R == 0 ? 0u : 1 + (R - 1) / a.k; };
  auto frontier = [&](uint32_t R) { return R == 0 ? 0u : (R - 1) % a.k; };
  auto parent = [&](uint32_t g) {
    const uint32_t R = g / a.kc, l = level(R);
    if (R == 0) return none;
    return (l == 1 ? 0u : 1 + (l - 2) * a.k) * a.kc + choice[(l - 1) * a.k + frontier(R)];
  };
  std::vector<std::pair<float, uint32_t>> order;
  for (uint32_t g = 0; g < total; ++g) {
    const size_t s = size_t{level(g / a.kc) * a.k + frontier(g / a.kc)} * a.state_width;
    if (state[s + 1] == 0 || cand_tokens[g] == none) continue;
    const float v = det::bits_float(state[s]) * cand_values[g];
    order.push_back({v >= FLT_MIN ? v : 0.0f, g});
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<uint32_t> kept;  // candidates, each after its parent
  for (const auto& [v, g] : order) {
    if (kept.size() >= budget) break;
    std::vector<uint32_t> chain;
    for (uint32_t x = g; x != none && std::find(kept.begin(), kept.end(), x) == kept.end(); x = parent(x))
      chain.push_back(x);
    if (kept.size() + chain.size() <= budget) kept.insert(kept.end(), chain.rbegin(), chain.rend());
  }
  CutRows r{{none}, {-1}};
  for (uint32_t d = 1; d <= a.levels; ++d) {
    std::vector<std::pair<std::pair<int32_t, uint32_t>, uint32_t>> at;  // ((parent's row, rank), g)
    for (uint32_t g : kept) {
      if (level(g / a.kc) + 1 != d) continue;
      const uint32_t p = parent(g);
      const int32_t prow = p == none ? 0 : static_cast<int32_t>(std::find(r.g.begin(), r.g.end(), p) - r.g.begin());
      at.push_back({{prow, g % a.kc}, g});
    }
    std::sort(at.begin(), at.end());
    for (const auto& [key, g] : at) {
      r.g.push_back(g);
      r.parent.push_back(key.first);
    }
  }
  while (r.g.size() < a.out_rows) {
    r.g.push_back(none);
    r.parent.push_back(0);
  }
  return r;
}

// Whether the prefix row sees slot s (every slot without one), as pack() wrote its row.
bool prefix_sees(const TreeCutArgs& a, uint32_t s) {
  if (a.prefix_ranges.empty()) return true;
  if (s < a.prefix_ranges[0]) return true;
  return s < a.prefix_ranges[1] && (a.prefix_bits[s / 32] >> (s % 32) & 1u);
}

}  // namespace

TreeCutResult draft_tree_cut(const std::vector<uint32_t>& cand_tokens, const std::vector<float>& cand_values,
                             const std::vector<uint32_t>& choice, const std::vector<uint32_t>& state,
                             const TreeCutArgs& a) {
  const uint32_t none = 0xFFFFFFFFu;
  const CutRows rows = cut_rows(cand_tokens, cand_values, choice, state, a);
  auto depth = [&](uint32_t i) {
    const uint32_t g = rows.g[i], R = g / a.kc;
    return i == 0 ? 0u : g == none || R == 0 ? 1u : 2 + (R - 1) / a.k;
  };
  TreeCutResult r;
  ops::AttentionMaskBuilder mb(a.out_rows - 1, int64_t{a.words} * 32);
  std::vector<uint32_t> slot(a.out_rows, a.root_slot);
  uint32_t canonical = 0, scratch = 0;
  for (uint32_t i = 1; i < a.out_rows; ++i) {
    const uint32_t d = depth(i);
    const bool first = rows.g[i] != none && d > canonical;
    if (first) canonical = d;
    slot[i] = first ? a.root_slot + d : a.scratch0 + scratch++;
    const uint32_t pos = a.c + d - 1, token = rows.g[i] == none ? none : cand_tokens[rows.g[i]];
    r.tokens.push_back(token);
    const ops::RopePosition p = a.seq_table > 0 ? ops::sequence_position(a.seq_first + pos, a.seq_table)
                                                : ops::llamagen_position(pos, 0, a.grid);
    r.rope.insert(r.rope.end(), {p.row, p.col, p.flag});
    r.slots.push_back(slot[i]);
    r.parents.push_back(rows.parent[i]);
    r.positions.insert(r.positions.end(), {std::min(pos, a.image_tokens), std::min(pos + 1, a.image_tokens)});
    for (uint32_t s = 0; s <= a.root_slot; ++s)
      if (prefix_sees(a, s)) mb.see(i - 1, s);
    for (uint32_t x = i; x > 0; x = static_cast<uint32_t>(rows.parent[x])) mb.see(i - 1, slot[x]);
  }
  for (uint32_t i = 0; i < a.out_rows; ++i) {
    const uint32_t d = depth(i);
    r.tree.insert(r.tree.end(), {static_cast<uint32_t>(rows.parent[i]), d, i == 0 ? none : r.tokens[i - 1], slot[i]});
  }
  const ops::PackedAttentionMask packed = mb.pack();
  r.ranges = packed.ranges;
  r.bits = packed.bits.empty() ? std::vector<uint32_t>(size_t{a.out_rows - 1} * a.words, 0) : packed.bits;
  return r;
}

}  // namespace vkspec::ref
