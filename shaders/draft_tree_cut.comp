#version 450
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "det_math.glsl"
// EAGLE-2's cut of a dynamic draft tree grown on the device, one workgroup (engine/ops/
// draft_tokens.h, draft_tree_cut): DraftTreeBuilder::select's rule (candidates by value, ties to
// the lower candidate index, i.e. the shallower, then the builder's earlier node; each taken with
// its ancestors not taken yet, skipped when they do not fit). Each top-token row is already in
// that order (q non-increasing by rank, ties to the lower rank), so the order is a merge of the
// rows: each step takes the best of the rows' heads. Then the kept nodes breadth first (depth,
// parent's row, rank), and each row's slot, target query (token, rope position, slot, attention
// row as AttentionMaskBuilder::pack writes it) and tree test rows. Every row sees of the slots up
// to the root's what the prefix row sees (the root's own query: a caption's padding hidden), or
// all of them when there is none. Loops stay short: llvmpipe
// ends an invocation's loops after 65535 iterations in all.
layout(local_size_x_id = 0) in;
layout(binding = 0) readonly buffer TT { uint cand_tokens[]; };
layout(binding = 1) readonly buffer TV { float cand_values[]; };
layout(binding = 2) readonly buffer Ch { uint choice[]; };
layout(binding = 3) readonly buffer St { uint state[]; };
layout(binding = 4) writeonly buffer Tr { uint tree[]; };
layout(binding = 5) writeonly buffer Tk { uint tokens[]; };
layout(binding = 6) writeonly buffer Rp { int rope[]; };
layout(binding = 7) writeonly buffer Sl { uint slots[]; };
layout(binding = 8) writeonly buffer Rg { uint ranges[]; };
layout(binding = 9) writeonly buffer Bt { uint bits[]; };
layout(binding = 10) writeonly buffer Pa { int parents[]; };
layout(binding = 11) writeonly buffer Po { uint positions[]; };
layout(binding = 12) writeonly buffer Tt { uint test_tokens[]; };
layout(binding = 13) readonly buffer PR { uint prefix_ranges[]; };
layout(binding = 14) readonly buffer PB { uint prefix_bits[]; };
layout(push_constant) uniform P {
  uint k, kc, levels, state_width, out_rows, cand_off, val_off, choice_off, tree_off, tok_off, rope_off, slot_off;
  uint range_off, bits_off, words, par_off, pos_off, test_tok_off, c, root_slot, grid, image_tokens, scratch0;
  uint seq_first, seq_table;  // seq_table > 0: 1D positions (ops::sequence_position), else the grid's
  uint has_prefix, prefix_range_off, prefix_bits_off;
} p;

// kMaxNodes and kMaxRows set ops::kMaxCutRows (kMaxNodes + 1) and ops::kMaxCutLevels (1 + (levels
// - 1) * ops::kMaxTopTokens rows fit kMaxRows) in engine/ops/draft_tokens.h: change them together.
const uint kMaxWg = 256u, kMaxNodes = 256u, kMaxRows = 2048u, kNone = 0xFFFFFFFFu;
shared float sh_v[kMaxWg];
shared uint sh_i[kMaxWg];
shared uint heads[kMaxRows / 4u];     // per top-token row: its next rank to visit, a byte each
shared uint row_kept[kMaxRows / 2u];  // per row: 1 + the kept entry of its node (0: not kept), 16 bits each
shared uint kept_g[kMaxNodes];        // the kept candidates, in the order they were taken
shared int kept_parent[kMaxNodes];    // the kept entry of each one's parent (-1: the root)
shared uint kept_row[kMaxNodes];      // its row of the cut tree
shared uint row_g[kMaxNodes + 1u];    // by row: its candidate (kNone: the root, a padding row)
shared int row_parent[kMaxNodes + 1u];
shared uint row_slot[kMaxNodes + 1u];
shared uint sh_n;

// Candidate g = R * kc + r: rank r of top-token row R (0: the root's; 1 + (l - 1) * k + j: row j
// of frontier level l).
uint level_of(uint R) { return R == 0u ? 0u : 1u + (R - 1u) / p.k; }
uint frontier_of(uint R) { return R == 0u ? 0u : (R - 1u) % p.k; }
uint depth_of(uint g) { return level_of(g / p.kc) + 1u; }
uint level_base(uint l) { return l == 0u ? 0u : 1u + (l - 1u) * p.k; }  // its first row

// The candidate that is row R's node (R >= 1), whose children the row holds.
uint node_of(uint R) {
  const uint l = level_of(R);
  return level_base(l - 1u) * p.kc + choice[p.choice_off + (l - 1u) * p.k + frontier_of(R)];
}

// Its value (draft_tree_level's product), or -1 where it is no candidate.
float candidate_value(uint g) {
  const uint R = g / p.kc, s = (level_of(R) * p.k + frontier_of(R)) * p.state_width;
  if (state[s + 1u] == 0u || cand_tokens[p.cand_off + g] == kNone) return -1.0;
  precise float v = uintBitsToFloat(state[s]) * cand_values[p.val_off + g];
  return v >= kFloatMin ? v : 0.0;
}

bool ranks_before(float va, uint ia, float vb, uint ib) { return va > vb || (va == vb && ia < ib); }

uint head_of(uint R) { return (heads[R >> 2u] >> ((R & 3u) * 8u)) & 0xFFu; }
uint kept_of(uint R) { return (row_kept[R >> 1u] >> ((R & 1u) * 16u)) & 0xFFFFu; }
void set_kept(uint R, uint e) {  // thread 0
  const uint sh = (R & 1u) * 16u;
  row_kept[R >> 1u] = (row_kept[R >> 1u] & ~(0xFFFFu << sh)) | ((e + 1u) << sh);
}

// The best of the rows' next candidates; kNone when every row is spent.
uint next_best(uint rows) {
  const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  float cv = 0.0;
  uint ci = kNone;
  for (uint R = tid; R < rows; R += wg) {
    const uint h = head_of(R), g = R * p.kc + h;
    const float v = h < p.kc ? candidate_value(g) : -1.0;
    if (v >= 0.0 && (ci == kNone || ranks_before(v, g, cv, ci))) {
      cv = v;
      ci = g;
    }
  }
  sh_v[tid] = cv;
  sh_i[tid] = ci;
  barrier();
  for (uint stride = wg / 2u; stride > 0u; stride /= 2u) {
    if (tid < stride) {
      const float ov = sh_v[tid + stride];
      const uint oi = sh_i[tid + stride], mi = sh_i[tid];
      if (oi != kNone && (mi == kNone || ranks_before(ov, oi, sh_v[tid], mi))) {
        sh_v[tid] = ov;
        sh_i[tid] = oi;
      }
    }
    barrier();
  }
  const uint found = sh_i[0];
  barrier();
  return found;
}

// The frontier row whose node g is (kNone: none; the growth picks a candidate at most once).
uint own_row(uint g) {
  const uint l = depth_of(g);
  if (l >= p.levels) return kNone;
  const uint local = g - level_base(l - 1u) * p.kc;
  for (uint j = 0u; j < p.k; ++j)
    if (choice[p.choice_off + (l - 1u) * p.k + j] == local) return level_base(l) + j;
  return kNone;
}

// Thread 0: the builder's step for candidate g: it and its ancestors not kept yet, if they fit.
void take(uint g, uint budget) {
  const uint mine = own_row(g);
  if (mine != kNone && kept_of(mine) != 0u) return;  // taken already, as an ancestor
  uint len = 1u, R = g / p.kc;
  int top = -1;
  for (; R != 0u; R = node_of(R) / p.kc) {
    if (kept_of(R) != 0u) {
      top = int(kept_of(R)) - 1;
      break;
    }
    ++len;
  }
  if (sh_n + len > budget) return;
  uint x = sh_n + len - 1u;
  kept_g[x] = g;
  if (mine != kNone) set_kept(mine, x);
  for (uint r = g / p.kc; x > sh_n; r = node_of(r) / p.kc) {
    kept_g[--x] = node_of(r);
    set_kept(r, x);
  }
  for (uint e = sh_n; e < sh_n + len; ++e) {
    kept_parent[e] = top;
    top = int(e);
  }
  sh_n += len;
}

void select_nodes(uint budget) {
  const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x, rows = level_base(p.levels);
  for (uint w = tid; w < kMaxRows / 2u; w += wg) {
    row_kept[w] = 0u;
    if (w < kMaxRows / 4u) heads[w] = 0u;
  }
  if (tid == 0u) sh_n = 0u;
  barrier();
  for (;;) {
    const uint g = next_best(rows);  // uniform
    if (g == kNone) break;
    if (tid == 0u) {
      take(g, budget);
      heads[g / p.kc >> 2u] += 1u << ((g / p.kc & 3u) * 8u);
    }
    barrier();
    const uint n = sh_n;
    barrier();
    if (n >= budget) break;
  }
}

// Rows breadth first: by depth, then the parent's row, then rank (then g: a total order even
// for tables whose frontier rows repeat a node, which the growth never writes).
void place_rows(uint n) {
  const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  uint base = 1u;
  for (uint d = 1u; d <= p.levels; ++d) {
    uint count = 0u;
    for (uint f = 0u; f < n; ++f) count += depth_of(kept_g[f]) == d ? 1u : 0u;
    for (uint e = tid; e < n; e += wg) {
      if (depth_of(kept_g[e]) != d) continue;
      const uint pe = kept_parent[e] < 0 ? 0u : kept_row[kept_parent[e]], re = kept_g[e] % p.kc;
      uint before = 0u;
      for (uint f = 0u; f < n; ++f) {
        if (depth_of(kept_g[f]) != d) continue;
        const uint pf = kept_parent[f] < 0 ? 0u : kept_row[kept_parent[f]], rf = kept_g[f] % p.kc;
        if (pf < pe || (pf == pe && (rf < re || (rf == re && kept_g[f] < kept_g[e])))) ++before;
      }
      kept_row[e] = base + before;
    }
    base += count;
    barrier();
  }
  for (uint i = tid; i < p.out_rows; i += wg) {
    row_g[i] = kNone;
    row_parent[i] = i == 0u ? -1 : 0;
  }
  barrier();
  for (uint e = tid; e < n; e += wg) {
    row_g[kept_row[e]] = kept_g[e];
    row_parent[kept_row[e]] = kept_parent[e] < 0 ? 0 : int(kept_row[kept_parent[e]]);
  }
  barrier();
}

uint row_depth(uint i) { return i == 0u ? 0u : row_g[i] == kNone ? 1u : depth_of(row_g[i]); }

// The first row of each depth in its position's slot, the others (padding too) in scratch slots.
uint slot_of(uint i, uint n) {
  if (i == 0u) return p.root_slot;
  if (i <= n && (i == 1u || row_depth(i - 1u) != row_depth(i))) return p.root_slot + row_depth(i);
  const uint canonical = i <= n ? row_depth(i) : n == 0u ? 0u : row_depth(n);
  return p.scratch0 + i - 1u - canonical;
}

// The end of the prefix row's visible run from slot 0, at most the root's slot + 1.
uint prefix_dense() {
  return p.has_prefix != 0u ? min(prefix_ranges[p.prefix_range_off], p.root_slot + 1u) : p.root_slot + 1u;
}

uint dense_end(uint i) {
  uint d = p.root_slot + 1u;
  if (prefix_dense() < d) return prefix_dense();  // a hidden slot below the root ends the run
  for (bool grew = true; grew;) {
    grew = false;
    for (uint a = i; a > 0u; a = uint(row_parent[a]))
      if (row_slot[a] == d) {
        ++d;
        grew = true;
      }
  }
  return d;
}

uint path_end(uint i) {
  uint e = p.root_slot + 1u;
  for (uint a = i; a > 0u; a = uint(row_parent[a])) e = max(e, row_slot[a] + 1u);
  return e;
}

void write_row(uint i) {
  const uint g = row_g[i], d = row_depth(i), token = g == kNone ? kNone : cand_tokens[p.cand_off + g];
  tree[p.tree_off + 4u * i] = uint(row_parent[i]);
  tree[p.tree_off + 4u * i + 1u] = d;
  tree[p.tree_off + 4u * i + 2u] = i == 0u ? kNone : token;
  tree[p.tree_off + 4u * i + 3u] = row_slot[i];
  if (i == 0u) return;
  const uint q = i - 1u, pos = p.c + d - 1u;
  tokens[p.tok_off + q] = token;
  test_tokens[p.test_tok_off + q] = token;
  const uint seq = p.seq_first + pos;
  rope[p.rope_off + 3u * q] = p.seq_table > 0u ? int(seq) : int(pos / p.grid);
  rope[p.rope_off + 3u * q + 1u] = p.seq_table > 0u ? int(p.seq_table + seq) : int(pos % p.grid);
  rope[p.rope_off + 3u * q + 2u] = 0;
  slots[p.slot_off + q] = row_slot[i];
  parents[p.par_off + q] = row_parent[i];
  positions[p.pos_off + 2u * q] = min(pos, p.image_tokens);
  positions[p.pos_off + 2u * q + 1u] = min(pos + 1u, p.image_tokens);
  ranges[p.range_off + 2u * q] = dense_end(i);
  ranges[p.range_off + 2u * q + 1u] = path_end(i);
}

void main() {
  const uint tid = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  select_nodes(p.out_rows - 1u);
  const uint n = sh_n;
  place_rows(n);
  for (uint i = tid; i < p.out_rows; i += wg) row_slot[i] = slot_of(i, n);
  barrier();
  for (uint i = tid; i < p.out_rows; i += wg) write_row(i);
  // Bits of the slots in [dense_end, path_end): the path's (the prefix ends below dense_end).
  for (uint e = tid; e < (p.out_rows - 1u) * p.words; e += wg) {
    const uint i = 1u + e / p.words, w = e - (i - 1u) * p.words;
    const uint d = dense_end(i), pd = prefix_dense();
    uint word = 0u;
    if (pd <= p.root_slot && w * 32u <= p.root_slot && w * 32u + 31u >= pd) {
      // The prefix row's bits of slots [pd, root_slot] (pack sets none outside its run's end).
      const uint lo = max(pd, w * 32u) - w * 32u, hi = min(p.root_slot + 1u, w * 32u + 32u) - w * 32u;
      const uint keep = (hi == 32u ? 0xFFFFFFFFu : (1u << hi) - 1u) & ~((1u << lo) - 1u);
      word = prefix_bits[p.prefix_bits_off + w] & keep;
    }
    for (uint a = i; a > 0u; a = uint(row_parent[a])) {
      const uint slot = row_slot[a];
      if (slot >= d && slot / 32u == w) word |= 1u << (slot % 32u);
    }
    bits[p.bits_off + e] = word;
  }
}
