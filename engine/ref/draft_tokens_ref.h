#pragma once
// CPU references of engine/ops/draft_tokens.h. q and out are [N, V] row-major.
#include <cstdint>
#include <vector>

namespace vkspec::ref {

struct TopTokens {
  std::vector<uint32_t> tokens;  // [N, k]
  std::vector<float> values;     // [N, k]
};
TopTokens top_tokens(const std::vector<float>& q, uint32_t vocab, uint32_t k);

std::vector<float> point_masses(const std::vector<uint32_t>& tokens, uint32_t vocab);

// ops::draft_tree_level on host vectors (the op's names; state is the whole state tensor, updated
// at level + 1 in the result). Mask rows come from AttentionMaskBuilder::pack (bits all 0 where it
// needs none).
struct TreeLevelArgs {
  uint32_t m = 1, k = 1, kc = 1, level = 0, state_width = 2, words = 1;
  uint32_t lo = 0, hi = 0, scratch0 = 0, rows = 1, row_stride = 0, g_base = 0;
};
struct TreeLevelResult {
  std::vector<uint32_t> state, choice, tokens, gather_ids, ranges, bits;
};
TreeLevelResult draft_tree_level(const std::vector<uint32_t>& cand_tokens, const std::vector<float>& cand_values,
                                 std::vector<uint32_t> state, const TreeLevelArgs& a);

// ops::draft_tree_cut on host vectors (the op's names): a plain sort of the candidates and the
// builder's greedy walk; mask rows from AttentionMaskBuilder::pack.
struct TreeCutArgs {
  uint32_t k = 1, kc = 1, levels = 1, state_width = 2, out_rows = 2, words = 1;
  uint32_t c = 0, root_slot = 0, grid = 1, image_tokens = 0, scratch0 = 0;
  uint32_t seq_first = 0, seq_table = 0;
  // The prefix row (ops::DraftTreeCut::prefix): ranges (2) and bits (words); empty: none.
  std::vector<uint32_t> prefix_ranges, prefix_bits;
};
struct TreeCutResult {
  std::vector<uint32_t> tree, tokens, slots, positions, ranges, bits;
  std::vector<int32_t> rope, parents;
};
TreeCutResult draft_tree_cut(const std::vector<uint32_t>& cand_tokens, const std::vector<float>& cand_values,
                             const std::vector<uint32_t>& choice, const std::vector<uint32_t>& state,
                             const TreeCutArgs& a);

}  // namespace vkspec::ref
