// The drafter's top tokens and point masses against their CPU references: tokens and values must be
// identical (error = the number of differing entries).
#include <cstring>
#include <random>

#include "engine/checks/op_check.h"
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

VKSPEC_OP_CHECK("draft_tree_level", "root k=10 committed [1, 200)",
                [](Context& c) { return check_tree_level(c, 0, 10, 10, 1, 200); });
VKSPEC_OP_CHECK("draft_tree_level", "level 3 k=10 committed [1, 500)",
                [](Context& c) { return check_tree_level(c, 3, 10, 10, 1, 500); });
VKSPEC_OP_CHECK("draft_tree_level", "level 5 k=64 committed [0, 900) (dense into the scratch)",
                [](Context& c) { return check_tree_level(c, 5, 64, 64, 0, 900); });
VKSPEC_OP_CHECK("draft_tree_level", "level 2 k=10 kc=4 (V < topk)",
                [](Context& c) { return check_tree_level(c, 2, 10, 4, 1, 300); });
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
