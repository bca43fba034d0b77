#pragma once
// A drafter's candidates chosen on the device, so a draft tree whose shape does not wait on them
// is recorded in one submit (decoding/eagle_strategy.h): each row's most likely tokens, and the
// point masses the tree tests then read. Bit-equal with ref::top_tokens / ref::point_masses.
#include <cstdint>

#include "engine/ops/attention.h"
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

// The most tokens top_tokens ranks per row (EAGLE's --topk bound; draft_tree_level.comp's kMaxK).
constexpr uint32_t kMaxTopTokens = 64;
// draft_tree_cut's bounds, which shaders/draft_tree_cut.comp's shared arrays set (GLSL cannot
// include this header, so the shader keeps its literals and names these): the most rows of a cut
// tree, the root included (kMaxNodes + 1), and the most levels it cuts (its kMaxRows top-token
// rows hold 1 + (levels - 1) * kMaxTopTokens).
constexpr uint32_t kMaxCutRows = 257;
constexpr uint32_t kMaxCutLevels = 32;

// For each row j of q (f32 [N, V], probabilities >= 0): its k most likely tokens in rank order, q
// descending with ties to the smaller id (DraftTreeBuilder's order), tokens[j][r] and
// values[j][r] = q[j][tokens[j][r]]. From the first rank whose q is not > 0 on (fewer than k
// tokens have mass, as after a top-k or top-p filter) every entry is tokens = kNoToken (0xFFFFFFFF),
// values = 0. tokens: u32/i32 [N, k]; values: f32 [N, k]; 1 <= k <= min(V, kMaxTopTokens).
void top_tokens(CommandStream& s, const TensorView& q, uint32_t k, const TensorView& tokens, const TensorView& values);

// out[j] = the point mass on tokens[j]: 0 everywhere but 1.0 at tokens[j]; all 0 where tokens[j]
// >= V (kNoToken: no candidate). tokens: u32/i32 [N]; out: f32 [N, V].
void point_masses(CommandStream& s, const TensorView& tokens, const TensorView& out);

// One level of EAGLE-2's dynamic draft tree grown on the device (decoding/eagle_strategy.h), with
// k = the tree's topk (the frontier's rows): the m <= k frontier rows of depth `level` (the root
// alone at level 0) each propose their kc top tokens (cand_*, top_tokens' rows; kc = min(topk, V)),
// candidate c = i * kc + r. A candidate
// exists where row i is valid and its token is not kNoToken; its value is the row's value times
// its q (f32, 0 below FLT_MIN: DraftTreeBuilder's). The next frontier is the k best values, ties
// to the lower c (the builder's order); new row j (kNoToken where fewer exist) gets:
//   choice[j] = c, tokens[j] = its token; state row (level + 1, j) = value bits, valid, its
//   ancestors' rows at depths 1 .. level + 1 (j itself last);
//   gather_ids[b * k + j] = b * row_stride + g_base + i (its parent's drafter features, batch row b);
//   mask row j: the slots it sees, as AttentionMaskBuilder::pack writes them: [lo, hi), and the
//   drafter slot scratch0 + (d - 1) * k + a_d of its ancestor row a_d at each depth d, itself included.
// state: u32 [levels + 1, k, state_width], state_width >= 2 + levels; the caller writes row (0, 0)
// (the root: value 1.0, valid). Bit-equal with ref::draft_tree_level.
struct DraftTreeLevel {
  TensorView cand_tokens, cand_values;  // u32 / f32 [m, kc]
  TensorView state;                     // u32, read at `level`, written at level + 1
  uint32_t level = 0, state_width = 0;
  TensorView choice, tokens, gather_ids;  // u32 [k], [k], [rows * k]: written
  AttentionMask mask;                     // ranges u32 [k, 2], bits u32 [k, words]: written
  uint32_t lo = 0, hi = 0, scratch0 = 0;
  uint32_t rows = 1, row_stride = 0, g_base = 0;
};
void draft_tree_level(CommandStream& s, const DraftTreeLevel& a);

// EAGLE-2's cut of the dynamic tree draft_tree_level grew over `levels` depths (decoding/
// eagle_strategy.h), so the target's verification is recorded without the host seeing the tree.
// Candidate g = R * kc + r is rank r of top-token row R: row 0 the root's, row 1 + (l - 1) * k + j
// frontier row j of level l (its value and validity in state row (l, j), its node the candidate
// choice[(l - 1) * k + j] of level l - 1's rows); it exists where its row is valid and its token
// is not kNoToken, with draft_tree_level's value. As the growth writes them, each row's values do
// not increase with rank (top_tokens' order) and no candidate is the node of two rows. The cut is
// DraftTreeBuilder::select's: by value,
// ties to the lower g, each candidate taken with its ancestors not taken yet when they fit in
// out_rows - 1 nodes; rows breadth first (depth, parent's row, rank), padded to out_rows with
// kNoToken children of the root. Row i (the root at 0) gets:
//   tree[i] = (parent row (-1 for the root), depth, token, slot): the first row of each depth in
//     its position's slot root_slot + depth, the others in scratch0 + i - 1 - (the depths before);
// and each row i >= 1, as query i - 1 of the outputs below: its token (tokens and test_tokens:
// the target's batch and the tests read their own copies); its rope position (row,
// col, 0) of image position c + depth - 1 on a grid x grid image, or with seq_table > 0 the 1D
// layout's (ops::sequence_position of sequence index seq_first + that position, seq_table the
// table's rows); its slot; its attention row as
// AttentionMaskBuilder::pack writes it (the slots up to root_slot, its ancestors' and its own);
// ops::tree_tests' parent row and (accept, final) positions (position and position + 1, at most
// image_tokens). Of the slots up to root_slot a row sees those the prefix row sees (the root's own
// query, whose mask hides a caption's padding), or all when there is no prefix row. Bit-equal
// with ref::draft_tree_cut.
struct DraftTreeCut {
  TensorView cand_tokens, cand_values;  // u32 / f32 [1 + (levels - 1) * k, kc]
  TensorView choice;                    // u32 [(levels - 1) * k] (any u32 view at levels == 1)
  TensorView state;                     // u32 [levels, k, state_width] at least: draft_tree_level's
  uint32_t k = 1, levels = 1, state_width = 2;
  TensorView tree;                                     // u32 [out_rows, 4]: written
  TensorView tokens, rope, slots, parents, positions;  // u32 [n], i32 [n, 3], u32 [n], i32 [n], u32 [n, 2]
  TensorView test_tokens;                              // u32 [n]
  AttentionMask mask;                                  // ranges u32 [n, 2], bits u32 [n, words]; n = out_rows - 1
  AttentionMask prefix;                                // ranges u32 [1, 2], bits u32 [1, words]; or unset
  uint32_t c = 0, root_slot = 0, grid = 1, image_tokens = 0, scratch0 = 0;
  uint32_t seq_first = 0, seq_table = 0;
};
void draft_tree_cut(CommandStream& s, const DraftTreeCut& a);

}  // namespace vkspec::ops
