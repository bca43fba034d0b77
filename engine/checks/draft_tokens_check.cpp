// The drafter's top tokens and point masses against their CPU references: tokens and values must be
// identical (error = the number of differing entries).
#include <algorithm>
#include <functional>
#include <numeric>
#include <cfloat>
#include <cstring>
#include <random>

#include "engine/checks/op_check.h"
#include "engine/ops/attention_mask.h"
#include "engine/ops/det_math.h"
#include "engine/ops/draft_tokens.h"
#include "engine/ops/speculative.h"
#include "engine/ref/draft_tokens_ref.h"

namespace vkspec {
namespace {

// Rows of probabilities drawn from `levels` distinct values (many ties), about a third of each
// row 0 and `sparse_rows` rows with fewer than k tokens of mass (what top-k / top-p leave).
std::vector<float> tied_probs(uint32_t rows, uint32_t vocab, uint32_t levels, uint32_t sparse_rows, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> q(size_t{rows} * vocab, 0.0f);
  for (uint32_t r = 0; r < rows; ++r) {
    const bool sparse = r < sparse_rows;
    for (uint32_t i = 0; i < vocab; ++i) {
      const bool zero = sparse ? rng() % vocab >= 3 : rng() % 3 == 0;
      q[size_t{r} * vocab + i] = zero ? 0.0f : static_cast<float>(1 + rng() % levels) / static_cast<float>(vocab);
    }
  }
  return q;
}

Tensor upload_tokens(Context& ctx, const std::vector<uint32_t>& v, const std::string& name) {
  Tensor t = ctx.tensor(DType::U32, {static_cast<int64_t>(v.size())}, name);
  ctx.upload(t, v.data(), v.size() * 4);
  return t;
}

CheckResult check_top_tokens(Context& ctx, uint32_t n, uint32_t vocab, uint32_t k, uint32_t levels) {
  const std::vector<float> q = tied_probs(n, vocab, levels, n / 3, n * 7 + vocab + k);
  Tensor tq = upload_floats(ctx, q, DType::F32, {n, vocab}, "q");
  Tensor tokens = ctx.tensor(DType::U32, {n, k}, "top tokens"), values = ctx.tensor(DType::F32, {n, k}, "top values");
  CommandStream s(ctx);
  ops::top_tokens(s, tq, k, tokens, values);
  s.submit_and_wait();
  std::vector<uint32_t> got_tokens(size_t{n} * k);
  ctx.download(tokens, got_tokens.data(), got_tokens.size() * 4);
  const std::vector<float> got_values = download_floats(ctx, values);
  const ref::TopTokens want = ref::top_tokens(q, vocab, k);
  size_t bad = 0, none = 0;
  for (size_t j = 0; j < got_tokens.size(); ++j) {
    bad += got_tokens[j] != want.tokens[j] || got_values[j] != want.values[j];
    none += want.tokens[j] == ops::kNoToken;
  }
  return {static_cast<double>(bad), 0.0,
          "N=" + std::to_string(n) + " V=" + std::to_string(vocab) + " k=" + std::to_string(k) + " (" +
              std::to_string(none) + " past the mass): " + std::to_string(bad) + " entries differ"};
}

CheckResult check_point_masses(Context& ctx, uint32_t n, uint32_t vocab) {
  std::mt19937 rng(n + vocab);
  std::vector<uint32_t> tokens(n);
  for (auto& t : tokens) t = rng() % vocab;
  tokens[n / 2] = ops::kNoToken;
  Tensor tt = upload_tokens(ctx, tokens, "tokens"), out = ctx.tensor(DType::F32, {n, vocab}, "point masses");
  CommandStream s(ctx);
  ops::point_masses(s, tt, out);
  s.submit_and_wait();
  const std::vector<float> got = download_floats(ctx, out), want = ref::point_masses(tokens, vocab);
  size_t bad = 0;
  for (size_t j = 0; j < got.size(); ++j) bad += got[j] != want[j];
  return {static_cast<double>(bad), 0.0,
          "N=" + std::to_string(n) + " V=" + std::to_string(vocab) + ": " + std::to_string(bad) + " entries differ"};
}

std::vector<uint32_t> download_words(Context& ctx, const Tensor& t) {
  std::vector<uint32_t> v(static_cast<size_t>(t.numel()));
  ctx.download(t, v.data(), v.size() * 4);
  return v;
}

// A level of frontier rows with random values (some invalid rows, tied products, a row's tokens
// ending early), ancestors and committed slots; everything the op writes must equal the reference.
CheckResult check_tree_level(Context& ctx, uint32_t level, uint32_t k, uint32_t kc, uint32_t lo, uint32_t hi) {
  std::mt19937 rng(level * 131 + k);
  const uint32_t m = level == 0 ? 1 : k, levels = level + 2, width = 2 + levels, rows = 2;
  ref::TreeLevelArgs a{m,  k,  kc,  level, width,          0,
                       lo, hi, 900, rows,  1 + levels * k, level == 0 ? 0 : 1 + (level - 1) * k};
  a.words = (a.scratch0 + levels * k + 31) / 32;
  std::vector<uint32_t> state(size_t{levels + 1} * k * width, 0), tokens(size_t{m} * kc, ops::kNoToken);
  std::vector<float> values(size_t{m} * kc, 0.0f);
  const float levels_of_q[] = {0.5f, 0.25f, 0.125f, 0.1f, 3e-20f, 1e-30f};
  for (uint32_t i = 0; i < m; ++i) {
    const size_t s = size_t{level * k + i} * width;
    const float v = level == 0 ? 1.0f : levels_of_q[rng() % 6];
    std::memcpy(&state[s], &v, 4);
    state[s + 1] = level == 0 || rng() % 5 != 0;
    for (uint32_t l = 0; l < level; ++l) state[s + 2 + l] = l + 1 == level ? i : rng() % k;
    const uint32_t n = rng() % 4 == 0 ? rng() % kc : kc;  // tokens with mass
    for (uint32_t r = 0; r < n; ++r) {
      tokens[size_t{i} * kc + r] = rng() % 16384;
      values[size_t{i} * kc + r] = levels_of_q[rng() % 6];
    }
  }
  const ref::TreeLevelResult want = ref::draft_tree_level(tokens, values, state, a);
  Tensor tt = upload_tokens(ctx, tokens, "candidates"), tst = upload_tokens(ctx, state, "state");
  Tensor tv = upload_floats(ctx, values, DType::F32, {m, kc}, "candidate q");
  Tensor choice = ctx.tensor(DType::U32, {k}, "choice"), next = ctx.tensor(DType::U32, {k}, "next tokens");
  Tensor gather = ctx.tensor(DType::U32, {rows * k}, "gather ids"), ranges = ctx.tensor(DType::U32, {k, 2}, "ranges");
  Tensor bits = ctx.tensor(DType::U32, {k, a.words}, "bits");
  ops::DraftTreeLevel d;
  d.cand_tokens = tt.view().reshape({m, kc});
  d.cand_values = tv.view();
  d.state = tst.view();
  d.level = level;
  d.state_width = width;
  d.choice = choice.view();
  d.tokens = next.view();
  d.gather_ids = gather.view();
  d.mask = {ranges.view(), bits.view()};
  d.lo = lo, d.hi = hi, d.scratch0 = a.scratch0, d.rows = rows, d.row_stride = a.row_stride, d.g_base = a.g_base;
  CommandStream s(ctx);
  ops::draft_tree_level(s, d);
  s.submit_and_wait();
  size_t bad = 0;
  const auto count = [&](const Tensor& t, const std::vector<uint32_t>& w) {
    const std::vector<uint32_t> g = download_words(ctx, t);
    for (size_t j = 0; j < g.size(); ++j) bad += g[j] != w[j];
  };
  count(tst, want.state);
  count(choice, want.choice);
  count(next, want.tokens);
  count(gather, want.gather_ids);
  count(ranges, want.ranges);
  count(bits, want.bits);
  return {static_cast<double>(bad), 0.0,
          "level " + std::to_string(level) + " k=" + std::to_string(k) + " kc=" + std::to_string(kc) + ": " +
              std::to_string(bad) + " words differ"};
}

// A grown tree's tables with random values (invalid rows, tied and tiny products, short rows; each
// row's q non-increasing by rank and each level's picks distinct, as the growth writes them);
// grown: each frontier row's value is its node's (as draft_tree_level writes it), else random, so a
// child may outrank its parent and the builder's skip of a chain that does not fit happens. Every
// row the cut writes must be the reference's.
struct CutTables {
  std::vector<uint32_t> tokens, state, choice;
  std::vector<float> values;
};

CutTables cut_tables(std::mt19937& rng, const ref::TreeCutArgs& a, bool grown) {
  const uint32_t k = a.k, kc = a.kc, levels = a.levels, width = a.state_width, R = 1 + (levels - 1) * k;
  const float levels_of_q[] = {0.5f, 0.25f, 0.125f, 0.1f, 3e-20f, 1e-30f, 1.0f};
  CutTables t;
  std::vector<uint32_t>& state = t.state;
  state.assign(size_t{levels} * k * width, 0);
  std::vector<uint32_t>& choice = t.choice;
  choice.assign(std::max<size_t>(size_t{levels - 1} * k, 1), 0);
  std::vector<uint32_t>& tokens = t.tokens;
  tokens.assign(size_t{R} * kc, ops::kNoToken);
  std::vector<float>& values = t.values;
  values.assign(size_t{R} * kc, 0.0f);
  std::vector<uint32_t> picks;  // a level's frontier picks: distinct candidates of the level above
  for (uint32_t row = 0; row < R; ++row) {
    const uint32_t l = row == 0 ? 0 : 1 + (row - 1) / k, j = row == 0 ? 0 : (row - 1) % k;
    const size_t s = size_t{l * k + j} * width;
    if (l > 0 && j == 0) {  // the level above's candidates (valid rows, tokens with mass)
      picks.clear();
      const uint32_t base = l == 1 ? 0 : 1 + (l - 2) * k;
      for (uint32_t x = 0; x < (l == 1 ? 1 : k) * kc; ++x) {
        const uint32_t prow = base + x / kc, pl = prow == 0 ? 0 : 1 + (prow - 1) / k,
                       pj = prow == 0 ? 0 : (prow - 1) % k;
        if (state[size_t{pl * k + pj} * width + 1] && tokens[size_t{prow} * kc + x % kc] != ops::kNoToken)
          picks.push_back(x);
      }
      std::shuffle(picks.begin(), picks.end(), rng);
    }
    state[s + 1] = l == 0 || rng() % 6 != 0;
    if (l > 0) choice[(l - 1) * k + j] = j < picks.size() ? picks[j] : ops::kNoToken;
    if (l > 0 && j >= picks.size()) state[s + 1] = 0;
    float v = l == 0 ? 1.0f : levels_of_q[rng() % 7];
    if (l > 0 && grown && state[s + 1]) {  // the chosen candidate's value: its row's value times its q
      const uint32_t g = (l == 1 ? 0 : 1 + (l - 2) * k) * kc + choice[(l - 1) * k + j], prow = g / kc;
      const uint32_t pl = prow == 0 ? 0 : 1 + (prow - 1) / k, pj = prow == 0 ? 0 : (prow - 1) % k;
      const float p = det::bits_float(state[size_t{pl * k + pj} * width]) * values[g];
      v = p >= FLT_MIN ? p : 0.0f;
      state[s + 1] = state[s + 1] && state[size_t{pl * k + pj} * width + 1] != 0 && tokens[g] != ops::kNoToken;
    }
    std::memcpy(&state[s], &v, 4);
    const uint32_t m = rng() % 4 == 0 ? rng() % kc : kc;  // tokens with mass, q non-increasing by rank
    std::vector<float> q(m);
    for (float& x : q) x = levels_of_q[rng() % 7];
    std::sort(q.begin(), q.end(), std::greater<float>());
    for (uint32_t r = 0; r < m; ++r) {
      tokens[size_t{row} * kc + r] = rng() % 16384;
      values[size_t{row} * kc + r] = q[r];
    }
  }
  return t;
}

// The root's query row with slots [25, 37) hidden (a caption's padding, across a word) and the rest up to the
// root's slot seen, as GptBatch packs it.
void padded_prefix(ref::TreeCutArgs& a) {
  ops::AttentionMaskBuilder mb(1, int64_t{a.words} * 32);
  mb.see_prefix(0, a.root_slot + 1);
  for (int64_t s = 25; s < 37; ++s) mb.hide(0, s);
  const ops::PackedAttentionMask m = mb.pack();
  a.prefix_ranges = m.ranges;
  a.prefix_bits = m.bits;
}

// seq_table > 0: 1D positions (Janus-Pro's) after 7 condition positions, else a 16 x 16 grid's.
// padded: every row sees the root's prefix with a caption's padding hidden (padded_prefix).
CheckResult check_tree_cut(Context& ctx, uint32_t levels, uint32_t k, uint32_t kc, uint32_t out_rows, bool grown,
                           uint32_t seq_table = 0, bool padded = false) {
  std::mt19937 rng(levels * 977 + k * 31 + out_rows);
  const uint32_t R = 1 + (levels - 1) * k, width = 2 + levels, n = out_rows - 1;
  ref::TreeCutArgs a{k, kc, levels, width, out_rows, 0, 40, 60, 16, 44, 600};
  a.words = (a.scratch0 + n + 31) / 32;
  a.seq_first = seq_table > 0 ? 7 : 0;
  a.seq_table = seq_table;
  if (padded) padded_prefix(a);
  const CutTables t = cut_tables(rng, a, grown);
  const std::vector<uint32_t>&tokens = t.tokens, &state = t.state, &choice = t.choice;
  const std::vector<float>& values = t.values;
  const ref::TreeCutResult want = ref::draft_tree_cut(tokens, values, choice, state, a);
  Tensor tt = upload_tokens(ctx, tokens, "candidates"), tst = upload_tokens(ctx, state, "state");
  Tensor tc = upload_tokens(ctx, choice, "choice"), tv = upload_floats(ctx, values, DType::F32, {R, kc}, "q");
  Tensor tree = ctx.tensor(DType::U32, {out_rows, 4}, "tree"), toks = ctx.tensor(DType::U32, {n}, "tokens");
  Tensor rope = ctx.tensor(DType::I32, {n, 3}, "rope"), slots = ctx.tensor(DType::U32, {n}, "slots");
  Tensor par = ctx.tensor(DType::I32, {n}, "parents"), pos = ctx.tensor(DType::U32, {n, 2}, "positions");
  Tensor test_toks = ctx.tensor(DType::U32, {n}, "test tokens");
  Tensor ranges = ctx.tensor(DType::U32, {n, 2}, "ranges"), bits = ctx.tensor(DType::U32, {n, a.words}, "bits");
  ops::DraftTreeCut d;
  d.cand_tokens = tt.view().reshape({R, kc});
  d.cand_values = tv.view();
  d.choice = tc.view();
  d.state = tst.view();
  d.k = k, d.levels = levels, d.state_width = width;
  d.tree = tree.view(), d.tokens = toks.view(), d.rope = rope.view(), d.slots = slots.view();
  d.parents = par.view(), d.positions = pos.view(), d.mask = {ranges.view(), bits.view()};
  d.test_tokens = test_toks.view();
  d.c = a.c, d.root_slot = a.root_slot, d.grid = a.grid, d.image_tokens = a.image_tokens, d.scratch0 = a.scratch0;
  d.seq_first = a.seq_first, d.seq_table = a.seq_table;
  Tensor prefix_ranges, prefix_bits;
  if (padded) {
    prefix_ranges = upload_tokens(ctx, a.prefix_ranges, "prefix ranges");
    prefix_bits = upload_tokens(ctx, a.prefix_bits, "prefix bits");
    d.prefix = {prefix_ranges.view().reshape({1, 2}), prefix_bits.view().reshape({1, a.words})};
  }
  CommandStream s(ctx);
  ops::draft_tree_cut(s, d);
  s.submit_and_wait();
  size_t bad = 0;
  const auto count = [&](const Tensor& t, const auto& w) {
    const std::vector<uint32_t> g = download_words(ctx, t);
    for (size_t j = 0; j < g.size(); ++j) bad += g[j] != static_cast<uint32_t>(w[j]);
  };
  count(tree, want.tree);
  count(toks, want.tokens);
  count(test_toks, want.tokens);
  count(rope, want.rope);
  count(slots, want.slots);
  count(par, want.parents);
  count(pos, want.positions);
  count(ranges, want.ranges);
  count(bits, want.bits);
  size_t padding = 0;
  for (uint32_t t : want.tokens) padding += t == ops::kNoToken;
  return {static_cast<double>(bad), 0.0,
          std::to_string(levels) + " levels k=" + std::to_string(k) + " kc=" + std::to_string(kc) + " rows " +
              std::to_string(out_rows) + " (" + std::to_string(padding) + " padding): " + std::to_string(bad) +
              " words differ"};
}

VKSPEC_OP_CHECK("draft_tree_level", "root k=10 committed [1, 200)",
                [](Context& c) { return check_tree_level(c, 0, 10, 10, 1, 200); });
VKSPEC_OP_CHECK("draft_tree_level", "level 3 k=10 committed [1, 500)",
                [](Context& c) { return check_tree_level(c, 3, 10, 10, 1, 500); });
VKSPEC_OP_CHECK("draft_tree_level", "level 5 k=64 committed [0, 900) (dense into the scratch)",
                [](Context& c) { return check_tree_level(c, 5, 64, 64, 0, 900); });
VKSPEC_OP_CHECK("draft_tree_level", "level 2 k=10 kc=4 (V < topk)",
                [](Context& c) { return check_tree_level(c, 2, 10, 4, 1, 300); });
VKSPEC_OP_CHECK("draft_tree_cut", "6 levels k=10 rows 61",
                [](Context& c) { return check_tree_cut(c, 6, 10, 10, 61, true); });
VKSPEC_OP_CHECK("draft_tree_cut", "4 levels k=5 kc=3 rows 9 (chains skipped)",
                [](Context& c) { return check_tree_cut(c, 4, 5, 3, 9, false); });
VKSPEC_OP_CHECK("draft_tree_cut", "2 levels k=3 rows 40 (padded, skips)",
                [](Context& c) { return check_tree_cut(c, 2, 3, 3, 40, false); });
VKSPEC_OP_CHECK("draft_tree_cut", "3 levels k=4 rows 60 (padded)",
                [](Context& c) { return check_tree_cut(c, 3, 4, 4, 60, true); });
VKSPEC_OP_CHECK("draft_tree_cut", "3 levels k=4 rows 60 (1D positions)",
                [](Context& c) { return check_tree_cut(c, 3, 4, 4, 60, true, 263); });
VKSPEC_OP_CHECK("draft_tree_cut", "3 levels k=4 rows 60 (caption padding hidden)",
                [](Context& c) { return check_tree_cut(c, 3, 4, 4, 60, true, 0, true); });
VKSPEC_OP_CHECK("draft_tree_cut", "1 level k=10 rows 11",
                [](Context& c) { return check_tree_cut(c, 1, 10, 10, 11, true); });
VKSPEC_OP_CHECK("draft_tree_cut", "8 levels k=64 rows 257",
                [](Context& c) { return check_tree_cut(c, 8, 64, 64, 257, true); });
VKSPEC_OP_CHECK("draft_tree_cut", "the largest levels, k and rows", [](Context& c) {
  return check_tree_cut(c, ops::kMaxCutLevels, ops::kMaxTopTokens, ops::kMaxTopTokens, ops::kMaxCutRows, true);
});
VKSPEC_OP_CHECK("draft_tree_cut", "8 levels k=64 rows 257 (skips)",
                [](Context& c) { return check_tree_cut(c, 8, 64, 64, 257, false); });
VKSPEC_OP_CHECK("top_tokens", "N=10 V=16384 k=10 many ties",
                [](Context& c) { return check_top_tokens(c, 10, 16384, 10, 40); });
VKSPEC_OP_CHECK("top_tokens", "N=7 V=16384 k=64", [](Context& c) { return check_top_tokens(c, 7, 16384, 64, 100000); });
VKSPEC_OP_CHECK("top_tokens", "N=33 V=1000 k=5 all tied",
                [](Context& c) { return check_top_tokens(c, 33, 1000, 5, 1); });
VKSPEC_OP_CHECK("top_tokens", "N=4 V=3 k=3", [](Context& c) { return check_top_tokens(c, 4, 3, 3, 2); });
VKSPEC_OP_CHECK("point_masses", "N=60 V=16384", [](Context& c) { return check_point_masses(c, 60, 16384); });
VKSPEC_OP_CHECK("point_masses", "N=3 V=5", [](Context& c) { return check_point_masses(c, 3, 5); });

}  // namespace
}  // namespace vkspec
