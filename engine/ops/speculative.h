#pragma once
// Speculative-decoding primitives over many positions at once (rows j = 0..N-1, each with its own
// target distribution p_j and draft distribution q_j over V tokens, f32 [N, V], usually the
// sampler's probs output). Results are bit-identical with ref:: on every device: the random
// numbers come from philox.h and the arithmetic from det_math.h. Nothing here stops at the first
// rejection; the strategy decides what to commit.
#include <cstdint>

#include "engine/ops/philox.h"
#include "engine/vk/command_stream.h"

namespace vkspec::ops {

constexpr uint32_t kNoToken = 0xFFFFFFFFu;

// Random keys per row, for the rows of several images in one call (batched decoding, where each
// image has its own seed and its own step count): row j draws with seeds[j] (u32 [N, 2], low word
// first) and purpose + (rounds[j] << 8) (u32 [N], added to the purpose's round field) instead of
// the call's seed and purpose. Empty: the call's for every row.
struct RowKeys {
  TensorView seeds, rounds;
  bool given() const { return seeds.buffer != VK_NULL_HANDLE; }
};

// How each row's uniform is keyed: the Philox key of row j's draw is (seed, purpose), or with
// rows given, row j's own seed and purpose + (rounds[j] << 8) (RowKeys). One argument instead of
// three, so the ops below stay within eight parameters.
struct DrawKeys {
  uint64_t seed = 0;
  uint32_t purpose = 0;
  RowKeys rows;  // empty: seed and purpose for every row
};

// accept[j] = 1 when draft token x = draft[j] survives, else 0. With a = p[j][x], b = q[j][x],
// u = philox::uniform(keys.seed, positions[j], keys.purpose, 0):
//   accept  <=>  a > 0 and (a >= b or u * b < a)
// i.e. u < min(1, a / b) without a division (exact on every device); x >= V is rejected.
// p, q: f32 [N, V]; draft, positions: u32/i32 [N]; accept: u32/i32 [N], written.
// keys.rows: per-row seeds and rounds (RowKeys), else keys.seed and keys.purpose for every row.
void spec_accept(CommandStream& s, const TensorView& p, const TensorView& q, const TensorView& draft,
                 const TensorView& positions, const DrawKeys& keys, const TensorView& accept);

// The same rule on given values a = p_x[j], b = q_x[j] (relaxed acceptance: pooled_prob sums for
// LANTERN / MuLo-SD style neighbourhoods). p_x, q_x: f32 [N].
void spec_accept_values(CommandStream& s, const TensorView& p_x, const TensorView& q_x, const TensorView& positions,
                        const DrawKeys& keys, const TensorView& accept);

// tokens[j] = a sample from norm(max(p_j - q_j, 0)); where that residual is all zero (p_j == q_j)
// from p_j instead; kNoToken when p_j is all zero too. Weights are w_i = max(p_i - q_i, 0) with
// differences below FLT_MIN taken as 0 (so no device's denormal flushing matters); the token is
// det::descend over their chunk tree with target
// philox::uniform(keys.seed, positions[j], keys.purpose, 0) * sum. With accept and draft given
// (u32/i32 [N]), rows with accept[j] != 0 just copy draft[j], so tokens is the resolved token of
// every position: "accept x ~ q, else resample" is lossless.
// keys as spec_accept's.
void spec_residual_sample(CommandStream& s, const TensorView& p, const TensorView& q, const TensorView& positions,
                          const DrawKeys& keys, const TensorView& tokens, const TensorView& accept = {},
                          const TensorView& draft = {});

// out[j] = sum of p[j][y] over y = neighbours[x][m], m = 0..k-1, x = tokens[j], added in m
// order starting from 0.0f. neighbours: u32 [V, k_max] (row x lists x's nearest codebook entries,
// x itself first); entries >= V are skipped (padding); 1 <= k <= k_max; x >= V gives 0.
// p: f32 [N, V]; tokens: u32/i32 [N]; out: f32 [N].
void pooled_prob(CommandStream& s, const TensorView& p, const TensorView& tokens, const TensorView& neighbours,
                 uint32_t k, const TensorView& out);

// out[j] = norm(max(p_j - q_j, 0)) as probabilities: the weights spec_residual_sample draws from
// (differences below FLT_MIN are 0; p_j itself where they are all zero; all zero if p_j is too)
// divided by their chunk-tree total. The target of the next candidate in multi-draft speculative
// sampling after candidate j's rejection. p, q, out: f32 [N, V]; out may not overlap p or q.
void residual_distribution(CommandStream& s, const TensorView& p, const TensorView& q, const TensorView& out);

// Every test of a candidate tree of M nodes in one dispatch (exact acceptance): for each node p,
// r = p's row of probs; for each child c of p (parent[c] == p, in index order, sibling s = 0, 1,
// ...) with draft[c] < V (a child whose draft is >= V, kNoToken, has no candidate: accept[c] = 0
// and r stays as it was): accept[c] = spec_accept's rule on r and q[c] at token draft[c] with
// philox::uniform(seed, positions[c].x, accept_purpose + (s << 8), 0), then r = norm(max(r - q[c],
// 0)) as residual_distribution; finally final_token[p] = spec_residual_sample of r against a zero
// q with philox::uniform(seed, positions[p].y, residual_purpose, 0). Bit-equal to that sequence
// of ops (the strategies' multi-draft tests) at one dispatch instead of three per node.
struct TreeTests {
  TensorView probs, q, scratch;  // f32 [M, V]; scratch holds the running residuals
  TensorView draft;              // u32 [M]
  // i32 [M]: -1 for a root, else < the node's index; several trees lie one after another, each
  // root followed by its own nodes, so a node's children come before the next root: the scan for
  // them stops there.
  TensorView parent;
  TensorView positions;  // u32 [M, 2]
  uint64_t seed = 0;
  uint32_t accept_purpose = 0, residual_purpose = 0;
  TensorView accept, final_token;  // u32 [M], written (accept of a root is left as it was)
  // The trees of several images in one dispatch, each node's parent index global: row j's seed is
  // keys.seeds[j], and keys.rounds is u32 [M, 2]: row j's tests as a child draw under
  // accept_purpose + ((rounds[j].x + s) << 8), its final draw under residual_purpose + (rounds[j].y
  // << 8). Empty: the call's seed and purposes for every row.
  RowKeys keys;
};
void tree_tests(CommandStream& s, const TreeTests& t);

// GSD's group masses (So et al., ICCV 2025, "Grouped Speculative Decoding"): for each row j with
// draft x = draft[j] < V, the group G(x) is x plus its neighbours in the target's ranking: in an
// ascending sort of p[j] (ties by token id), the `below` tokens just before x and the `above`
// tokens just after it (fewer at the ends), each kept only if |p[j][y] - p[j][x]| < gap (no filter
// for gap >= 1) and the squared distance between rows x and y of `embeddings` is < dist2 (no
// filter for dist2 >= 4: the table's rows are unit vectors). p_group[j] = sum_G p[j] and
// q_group[j] = sum_G q[j], each summed from x's term in group order (below nearest first, then
// above nearest first); 0 for a row without a draft (what spec_accept_values rejects).
// Bit-equal with ref::gsd_group_mass.
struct GsdGroupMass {
  TensorView p, q;                 // f32 [N, V]
  TensorView draft;                // u32 [N]
  TensorView embeddings;           // f32 [V, E], unit rows
  uint32_t below = 0, above = 0;   // below + above <= 64
  float gap = 1.0f, dist2 = 4.0f;  // no filter
  TensorView p_group, q_group;     // f32 [N], written
};
void gsd_group_mass(CommandStream& s, const GsdGroupMass& a);

// LANTERN's relaxed target (Jang et al., ICLR 2025): out[j] = p[j] with the mass of the draft's
// latent neighbourhood A moved onto the draft x = draft[j]. A = {x} plus neighbours[x][m],
// m = 1..k-1 in table order (entries >= V and x itself skipped), admitted while the moved mass
// stays <= the budget b = delta + per_mass * p[j][x] (per_mass 0: LANTERN's additive budget delta;
// delta 0, per_mass lambda - 1: LANTERN++'s multiplicative one, p'(x) <= lambda p(x)): moved =
// moved + p[j][y] in that order, stopping at the first y that would exceed b. Then out[j][x] = p[j][x] + moved and
// out[j][y] = 0 for the other members of A; the total variation between out[j] and p[j] is exactly `moved`. Rows whose
// draft is >= V (kNoToken) are copied unchanged. p, out: f32 [N, V] (distinct); draft u32/i32 [N]; neighbours u32 [V,
// k_max].
void relax_neighbourhood(CommandStream& s, const TensorView& p, const TensorView& draft, const TensorView& neighbours,
                         uint32_t k, float delta, const TensorView& out, float per_mass = 0.0f);

// LANTERN++'s distribution to subtract after a rejected draft (Park et al. 2025, the released
// code's static-tree path): out[j] = q[j] with the draft x's neighbours N = neighbours[x][m],
// m = 1..count (entries >= V and x itself skipped), set to 0 and the rest scaled by
// 1 / (1 - sum_N q[j]) (0 when that is not positive; the sum in m order), where
// relax_neighbourhood moved mass onto x (relaxed[j][x] != p[j][x]); q[j] unchanged otherwise and
// for rows without a draft. Bit-equal with ref::exclude_neighbourhood. q, p, relaxed, out: f32
// [N, V] (out distinct from the others); draft u32 [N]; neighbours u32 [V, k_max], count < k_max.
void exclude_neighbourhood(CommandStream& s, const TensorView& q, const TensorView& p, const TensorView& relaxed,
                           const TensorView& draft, const TensorView& neighbours, uint32_t count,
                           const TensorView& out);

}  // namespace vkspec::ops
