// Speculative primitives against their CPU references. Accept flags and tokens must be identical
// (error = fraction of differing entries); pooled sums are the same additions in the same order,
// so they must be identical too.
#include <algorithm>
#include <cmath>
#include <random>

#include "engine/checks/op_check.h"
#include "engine/ops/speculative.h"
#include "engine/ref/speculative_ref.h"

namespace vkspec {
namespace {

using philox::Purpose;
using philox::purpose_word;

// Row-normalised distributions with about a third of each row zeroed (as top-k / top-p leave them).
std::vector<float> random_probs(uint32_t rows, uint32_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> logit(-3.0f, 3.0f);
  std::vector<float> p(size_t{rows} * vocab);
  for (uint32_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (uint32_t i = 0; i < vocab; ++i) {
      const double w = (vocab > 1 && rng() % 3 == 0) ? 0.0 : std::exp(static_cast<double>(logit(rng)));
      p[size_t{r} * vocab + i] = static_cast<float>(w);
      sum += w;
    }
    if (sum == 0) {
      p[size_t{r} * vocab] = 1.0f;
      sum = 1;
    }
    for (uint32_t i = 0; i < vocab; ++i) p[size_t{r} * vocab + i] = static_cast<float>(p[size_t{r} * vocab + i] / sum);
  }
  return p;
}

std::vector<uint32_t> draw_from(const std::vector<float>& q, uint32_t rows, uint32_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> x(rows);
  for (uint32_t r = 0; r < rows; ++r) {
    std::discrete_distribution<uint32_t> d(q.begin() + size_t{r} * vocab, q.begin() + size_t{r + 1} * vocab);
    x[r] = d(rng);
  }
  return x;
}

std::vector<uint32_t> random_positions(uint32_t n, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = rng() % 65536;
  return v;
}

Tensor upload_u32(Context& ctx, const std::vector<uint32_t>& v, const std::string& name) {
  Tensor t = ctx.tensor(DType::U32, {static_cast<int64_t>(v.size())}, name);
  ctx.upload(t, v.data(), v.size() * 4);
  return t;
}

std::vector<uint32_t> download_u32(Context& ctx, const Tensor& t) {
  std::vector<uint32_t> v(static_cast<size_t>(t.numel()));
  ctx.download(t, v.data(), v.size() * 4);
  return v;
}

CheckResult compare(const std::vector<uint32_t>& got, const std::vector<uint32_t>& want, const std::string& what) {
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
  return {got.empty() ? 0.0 : static_cast<double>(bad) / got.size(), 0.0,
          what + ": " + std::to_string(bad) + " of " + std::to_string(got.size()) + " differ"};
}

CheckResult check_accept(Context& ctx, uint32_t n, uint32_t vocab) {
  auto p = random_probs(n, vocab, 1), q = random_probs(n, vocab, 2);
  // Some rows with q == p (always accepted where p > 0) and some with q = p / 2 (p >= q).
  for (uint32_t r = 0; r < n; r += 7)
    for (uint32_t i = 0; i < vocab; ++i) q[size_t{r} * vocab + i] = p[size_t{r} * vocab + i] * (r % 2 ? 0.5f : 1.0f);
  auto draft = draw_from(q, n, vocab, 3);
  for (uint32_t r = 5; r < n; r += 101) draft[r] = vocab + r;  // invalid drafts are rejected
  const auto positions = random_positions(n, 4);
  const uint64_t seed = 0xABCDEF0123ull;
  const uint32_t purpose = purpose_word(Purpose::Accept, 2);
  Tensor tp = upload_floats(ctx, p, DType::F32, {n, vocab}, "p"),
         tq = upload_floats(ctx, q, DType::F32, {n, vocab}, "q");
  Tensor td = upload_u32(ctx, draft, "draft"), tpos = upload_u32(ctx, positions, "positions");
  Tensor acc = ctx.tensor(DType::U32, {n}, "accept");
  CommandStream s(ctx);
  ops::spec_accept(s, tp, tq, td, tpos, {seed, purpose}, acc);
  s.submit_and_wait();
  return compare(download_u32(ctx, acc), ref::spec_accept(p, q, vocab, draft, positions, seed, purpose),
                 "accept N=" + std::to_string(n) + " V=" + std::to_string(vocab));
}

CheckResult check_accept_values(Context& ctx, uint32_t n) {
  auto a = random_floats(n, 5, 0.0f, 1.0f), b = random_floats(n, 6, 0.0f, 1.0f);
  for (uint32_t j = 0; j < n; j += 5) b[j] = a[j];
  for (uint32_t j = 0; j < n; j += 11) a[j] = 0.0f;
  const auto positions = random_positions(n, 7);
  const uint32_t purpose = purpose_word(Purpose::Accept);
  Tensor ta = upload_floats(ctx, a, DType::F32, {n}, "p_x"), tb = upload_floats(ctx, b, DType::F32, {n}, "q_x");
  Tensor tpos = upload_u32(ctx, positions, "positions"), acc = ctx.tensor(DType::U32, {n}, "accept");
  CommandStream s(ctx);
  ops::spec_accept_values(s, ta, tb, tpos, {99, purpose}, acc);
  s.submit_and_wait();
  return compare(download_u32(ctx, acc), ref::spec_accept_values(a, b, positions, 99, purpose),
                 "accept values N=" + std::to_string(n));
}

CheckResult check_residual(Context& ctx, uint32_t n, uint32_t vocab, bool resolve) {
  auto p = random_probs(n, vocab, 8), q = random_probs(n, vocab, 9);
  for (uint32_t r = 3; r < n; r += 10)  // residual mass 0: falls back to p
    for (uint32_t i = 0; i < vocab; ++i) q[size_t{r} * vocab + i] = p[size_t{r} * vocab + i];
  if (n > 1)  // p all zero: no token
    for (uint32_t i = 0; i < vocab; ++i) p[size_t{n - 1} * vocab + i] = q[size_t{n - 1} * vocab + i] = 0.0f;
  const auto positions = random_positions(n, 10);
  std::vector<uint32_t> accept, draft;
  if (resolve) {
    draft = draw_from(q, n - 1, vocab, 11);
    draft.push_back(0);
    accept = ref::spec_accept(p, q, vocab, draft, positions, 12, purpose_word(Purpose::Accept));
  }
  const uint64_t seed = 0x5EEDull << 40;
  const uint32_t purpose = purpose_word(Purpose::Residual, 1);
  Tensor tp = upload_floats(ctx, p, DType::F32, {n, vocab}, "p"),
         tq = upload_floats(ctx, q, DType::F32, {n, vocab}, "q");
  Tensor tpos = upload_u32(ctx, positions, "positions"), tok = ctx.tensor(DType::U32, {n}, "tokens");
  CommandStream s(ctx);
  if (resolve) {
    Tensor ta = upload_u32(ctx, accept, "accept"), td = upload_u32(ctx, draft, "draft");
    ops::spec_residual_sample(s, tp, tq, tpos, {seed, purpose}, tok, ta, td);
    s.submit_and_wait();
  } else {
    ops::spec_residual_sample(s, tp, tq, tpos, {seed, purpose}, tok);
    s.submit_and_wait();
  }
  return compare(download_u32(ctx, tok),
                 ref::spec_residual_sample(p, q, vocab, positions, seed, purpose, accept, draft),
                 "residual N=" + std::to_string(n) + " V=" + std::to_string(vocab));
}

// Rows of several images (batched decoding): each row's own seed and round (RowKeys) through
// spec_accept and the resolving spec_residual_sample, against the references called row by row.
CheckResult check_row_keys(Context& ctx, uint32_t n, uint32_t vocab) {
  auto p = random_probs(n, vocab, 41), q = random_probs(n, vocab, 42);
  const auto draft = draw_from(q, n, vocab, 43), positions = random_positions(n, 44);
  std::mt19937_64 rng(45);
  std::vector<uint64_t> seeds(n);
  std::vector<uint32_t> rounds(n);
  for (uint32_t j = 0; j < n; ++j) {
    seeds[j] = j % 3 == 0 && j > 0 ? seeds[j - 1] : rng();  // some rows share an image's seed
    rounds[j] = static_cast<uint32_t>(rng() % 300);
  }
  const uint32_t accept_purpose = purpose_word(Purpose::Accept), residual_purpose = purpose_word(Purpose::Residual);
  std::vector<uint32_t> want_accept(n), want_tokens(n);
  for (uint32_t j = 0; j < n; ++j) {
    const std::vector<float> pj(p.begin() + size_t{j} * vocab, p.begin() + size_t{j + 1} * vocab);
    const std::vector<float> qj(q.begin() + size_t{j} * vocab, q.begin() + size_t{j + 1} * vocab);
    want_accept[j] =
        ref::spec_accept(pj, qj, vocab, {draft[j]}, {positions[j]}, seeds[j], accept_purpose + (rounds[j] << 8))[0];
    want_tokens[j] = ref::spec_residual_sample(pj, qj, vocab, {positions[j]}, seeds[j],
                                               residual_purpose + (rounds[j] << 8), {want_accept[j]}, {draft[j]})[0];
  }
  Tensor tp = upload_floats(ctx, p, DType::F32, {n, vocab}, "p"),
         tq = upload_floats(ctx, q, DType::F32, {n, vocab}, "q");
  Tensor td = upload_u32(ctx, draft, "draft"), tpos = upload_u32(ctx, positions, "positions");
  Tensor tseeds = ctx.tensor(DType::U32, {n, 2}, "seeds"), trounds = upload_u32(ctx, rounds, "rounds");
  ctx.upload(tseeds, seeds.data(), seeds.size() * 8);  // little-endian: low word first, as the ops read
  Tensor acc = ctx.tensor(DType::U32, {n}, "accept"), tok = ctx.tensor(DType::U32, {n}, "tokens");
  const ops::RowKeys keys{tseeds.view(), trounds.view()};
  CommandStream s(ctx);
  ops::spec_accept(s, tp, tq, td, tpos, {1, accept_purpose, keys}, acc);
  ops::spec_residual_sample(s, tp, tq, tpos, {1, residual_purpose, keys}, tok, acc, td);
  s.submit_and_wait();
  std::vector<uint32_t> got = download_u32(ctx, acc), want = want_accept;
  const std::vector<uint32_t> got_tokens = download_u32(ctx, tok);
  got.insert(got.end(), got_tokens.begin(), got_tokens.end());
  want.insert(want.end(), want_tokens.begin(), want_tokens.end());
  return compare(got, want, "row keys N=" + std::to_string(n) + " V=" + std::to_string(vocab) + " (accept, tokens)");
}

CheckResult check_pooled(Context& ctx, uint32_t n, uint32_t vocab, uint32_t k_max, uint32_t k) {
  const auto p = random_probs(n, vocab, 13);
  std::mt19937 rng(14);
  std::vector<uint32_t> nb(size_t{vocab} * k_max), tokens(n);
  for (uint32_t x = 0; x < vocab; ++x) {
    nb[size_t{x} * k_max] = x;
    for (uint32_t m = 1; m < k_max; ++m) nb[size_t{x} * k_max + m] = rng() % 17 == 0 ? 0xFFFFFFFFu : rng() % vocab;
  }
  for (auto& t : tokens) t = rng() % vocab;
  tokens[n / 2] = vocab;  // out of range: 0
  Tensor tp = upload_floats(ctx, p, DType::F32, {n, vocab}, "p"), tt = upload_u32(ctx, tokens, "tokens");
  Tensor tn = ctx.tensor(DType::U32, {vocab, k_max}, "neighbours");
  ctx.upload(tn, nb.data(), nb.size() * 4);
  Tensor out = ctx.tensor(DType::F32, {n}, "pooled");
  CommandStream s(ctx);
  ops::pooled_prob(s, tp, tt, tn, k, out);
  s.submit_and_wait();
  const auto got = download_floats(ctx, out), want = ref::pooled_prob(p, vocab, tokens, nb, k_max, k);
  size_t bad = 0;
  for (size_t j = 0; j < got.size(); ++j) bad += got[j] != want[j];
  return {normalised_error(got, want) + static_cast<double>(bad), 0.0,
          "N=" + std::to_string(n) + " V=" + std::to_string(vocab) + " k=" + std::to_string(k) + ": " +
              std::to_string(bad) + " sums differ"};
}

// A neighbour table as a real one is: row x lists x first, then other entries without repeats in
// a random order; about one entry in `pad_every` is padding (>= V, skipped by the ops).
std::vector<uint32_t> distinct_neighbours(uint32_t vocab, uint32_t k_max, uint32_t pad_every, std::mt19937& rng) {
  std::vector<uint32_t> nb(size_t{vocab} * k_max), perm(vocab);
  for (uint32_t x = 0; x < vocab; ++x) {
    for (uint32_t i = 0; i < vocab; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    nb[size_t{x} * k_max] = x;
    uint32_t m = 1;
    for (uint32_t i = 0; i < vocab && m < k_max; ++i)
      if (perm[i] != x) nb[size_t{x} * k_max + m++] = rng() % pad_every == 0 ? 0xFFFFFFFFu : perm[i];
    for (; m < k_max; ++m) nb[size_t{x} * k_max + m] = 0xFFFFFFFFu;
  }
  return nb;
}

// Neighbour lists without repeats (as a real table has), some padding; budgets from "nothing
// admitted" to "everything admitted", additive (delta) or multiplicative (per_mass = lambda - 1).
CheckResult check_relax(Context& ctx, uint32_t n, uint32_t vocab, uint32_t k_max, uint32_t k, float delta,
                        float per_mass = 0.0f) {
  const auto p = random_probs(n, vocab, 15);
  std::mt19937 rng(16);
  const std::vector<uint32_t> nb = distinct_neighbours(vocab, k_max, 13, rng);
  std::vector<uint32_t> draft(n);
  for (auto& t : draft) t = rng() % vocab;
  draft[n / 2] = 0xFFFFFFFFu;  // no draft: copied
  Tensor tp = upload_floats(ctx, p, DType::F32, {n, vocab}, "p"), td = upload_u32(ctx, draft, "draft");
  Tensor tn = ctx.tensor(DType::U32, {vocab, k_max}, "neighbours");
  ctx.upload(tn, nb.data(), nb.size() * 4);
  Tensor out = ctx.tensor(DType::F32, {n, vocab}, "relaxed");
  CommandStream s(ctx);
  ops::relax_neighbourhood(s, tp, td, tn, k, delta, out, per_mass);
  s.submit_and_wait();
  const auto got = download_floats(ctx, out),
             want = ref::relax_neighbourhood(p, vocab, draft, nb, k_max, k, delta, per_mass);
  size_t bad = 0;
  for (size_t j = 0; j < got.size(); ++j) bad += got[j] != want[j];
  return {normalised_error(got, want) + static_cast<double>(bad), 0.0,
          "N=" + std::to_string(n) + " V=" + std::to_string(vocab) + " k=" + std::to_string(k) +
              " delta=" + std::to_string(delta) + " per_mass=" + std::to_string(per_mass) + ": " + std::to_string(bad) +
              " values differ"};
}

// The relaxed rows come from the reference relax with LANTERN++'s budget (lambda - 1) p(x), so
// some rows moved mass onto their draft and some did not (lambda 1: none did).
CheckResult check_exclude(Context& ctx, uint32_t n, uint32_t vocab, uint32_t k_max, uint32_t k, float per_mass,
                          uint32_t count) {
  const auto p = random_probs(n, vocab, 61), q = random_probs(n, vocab, 62);
  std::mt19937 rng(63);
  const std::vector<uint32_t> nb = distinct_neighbours(vocab, k_max, 11, rng);
  std::vector<uint32_t> draft(n);
  for (auto& t : draft) t = rng() % vocab;
  draft[n / 2] = 0xFFFFFFFFu;  // no draft: q copied
  const auto relaxed = ref::relax_neighbourhood(p, vocab, draft, nb, k_max, k, 0.0f, per_mass);
  Tensor tq = upload_floats(ctx, q, DType::F32, {n, vocab}, "q"),
         tp = upload_floats(ctx, p, DType::F32, {n, vocab}, "p");
  Tensor tr = upload_floats(ctx, relaxed, DType::F32, {n, vocab}, "relaxed"), td = upload_u32(ctx, draft, "draft");
  Tensor tn = ctx.tensor(DType::U32, {vocab, k_max}, "neighbours");
  ctx.upload(tn, nb.data(), nb.size() * 4);
  Tensor out = ctx.tensor(DType::F32, {n, vocab}, "excluded");
  CommandStream s(ctx);
  ops::exclude_neighbourhood(s, tq, tp, tr, td, tn, count, out);
  s.submit_and_wait();
  const auto got = download_floats(ctx, out),
             want = ref::exclude_neighbourhood(q, p, relaxed, vocab, draft, nb, k_max, count);
  size_t bad = 0, moved = 0;
  for (size_t j = 0; j < got.size(); ++j) bad += got[j] != want[j];
  for (uint32_t j = 0; j < n; ++j)
    moved += draft[j] < vocab && relaxed[size_t{j} * vocab + draft[j]] != p[size_t{j} * vocab + draft[j]];
  return {normalised_error(got, want) + static_cast<double>(bad), 0.0,
          "N=" + std::to_string(n) + " V=" + std::to_string(vocab) + " count=" + std::to_string(count) + ": " +
              std::to_string(moved) + " rows moved mass, " + std::to_string(bad) + " values differ"};
}

// Rows with ties (a third of each row is 0, and some equal non-zero values), drafts at the top,
// the bottom and outside the vocabulary; gap and distance filters from "keep nothing" to "off".
CheckResult check_gsd(Context& ctx, uint32_t n, uint32_t vocab, uint32_t dim, uint32_t below, uint32_t above, float gap,
                      float dist2) {
  auto p = random_probs(n, vocab, 51);
  const auto q = random_probs(n, vocab, 52);
  std::mt19937 rng(53);
  for (uint32_t j = 0; j < n; ++j)
    for (int t = 0; t < 4; ++t) p[size_t{j} * vocab + rng() % vocab] = p[size_t{j} * vocab];
  std::normal_distribution<float> normal;
  std::vector<float> emb(size_t{vocab} * dim);
  for (uint32_t x = 0; x < vocab; ++x) {
    float norm = 0.0f;
    for (uint32_t e = 0; e < dim; ++e) norm += (emb[size_t{x} * dim + e] = normal(rng)) * emb[size_t{x} * dim + e];
    for (uint32_t e = 0; e < dim; ++e) emb[size_t{x} * dim + e] /= std::sqrt(norm);
  }
  std::vector<uint32_t> draft(n);
  for (auto& t : draft) t = rng() % vocab;
  draft[0] = static_cast<uint32_t>(std::max_element(p.begin(), p.begin() + vocab) - p.begin());  // top of its row
  if (n > 2) draft[n / 2] = 0xFFFFFFFFu;                                                         // no draft: (0, 0)
  Tensor tp = upload_floats(ctx, p, DType::F32, {n, vocab}, "p"),
         tq = upload_floats(ctx, q, DType::F32, {n, vocab}, "q");
  Tensor td = upload_u32(ctx, draft, "draft"), te = upload_floats(ctx, emb, DType::F32, {vocab, dim}, "embeddings");
  Tensor out = ctx.tensor(DType::F32, {2, n}, "group masses");
  CommandStream s(ctx);
  const TensorView flat = out.view().reshape({2 * int64_t{n}});
  ops::GsdGroupMass g;
  g.p = tp;
  g.q = tq;
  g.draft = td;
  g.embeddings = te;
  g.below = below;
  g.above = above;
  g.gap = gap;
  g.dist2 = dist2;
  g.p_group = flat.rows(0, n);
  g.q_group = flat.rows(n, n);
  ops::gsd_group_mass(s, g);
  s.submit_and_wait();
  const auto got = download_floats(ctx, out);
  const auto want = ref::gsd_group_mass(p, q, vocab, draft, emb, dim, {below, above, gap, dist2});
  size_t bad = 0;
  for (size_t j = 0; j < got.size(); ++j) bad += got[j] != want[j];
  return {normalised_error(got, want) + static_cast<double>(bad), 0.0,
          "N=" + std::to_string(n) + " V=" + std::to_string(vocab) + " group " + std::to_string(below) + "+" +
              std::to_string(above) + ": " + std::to_string(bad) + " sums differ"};
}

CheckResult check_residual_distribution(Context& ctx, uint32_t n, uint32_t vocab) {
  const auto p = random_probs(n, vocab, 17);
  auto q = random_probs(n, vocab, 18);
  std::copy(p.begin(), p.begin() + vocab, q.begin());  // row 0: p == q, falls back to p
  Tensor tp = upload_floats(ctx, p, DType::F32, {n, vocab}, "p"),
         tq = upload_floats(ctx, q, DType::F32, {n, vocab}, "q");
  Tensor out = ctx.tensor(DType::F32, {n, vocab}, "residual");
  CommandStream s(ctx);
  ops::residual_distribution(s, tp, tq, out);
  s.submit_and_wait();
  const auto got = download_floats(ctx, out), want = ref::residual_distribution(p, q, vocab);
  size_t bad = 0;
  for (size_t j = 0; j < got.size(); ++j) bad += got[j] != want[j];
  return {normalised_error(got, want) + static_cast<double>(bad), 0.0,
          "N=" + std::to_string(n) + " V=" + std::to_string(vocab) + ": " + std::to_string(bad) + " values differ"};
}

VKSPEC_OP_CHECK("residual_distribution", "N=40 V=1000",
                [](Context& c) { return check_residual_distribution(c, 40, 1000); });
VKSPEC_OP_CHECK("residual_distribution", "N=3 V=16384",
                [](Context& c) { return check_residual_distribution(c, 3, 16384); });
VKSPEC_OP_CHECK("residual_distribution", "N=5 V=7", [](Context& c) { return check_residual_distribution(c, 5, 7); });
VKSPEC_OP_CHECK("gsd_group_mass", "N=40 V=1000 E=8 group 7+6 gap 0.15 d2 0.5",
                [](Context& c) { return check_gsd(c, 40, 1000, 8, 7, 6, 0.15f, 0.5f); });
VKSPEC_OP_CHECK("gsd_group_mass", "N=5 V=16384 E=64 group 7+6 filters off",
                [](Context& c) { return check_gsd(c, 5, 16384, 64, 7, 6, 1.0f, 4.0f); });
VKSPEC_OP_CHECK("gsd_group_mass", "N=9 V=20 E=3 group 32+32 (whole row)",
                [](Context& c) { return check_gsd(c, 9, 20, 3, 32, 32, 0.3f, 1.5f); });
VKSPEC_OP_CHECK("gsd_group_mass", "N=3 V=300 group 0+0 (the draft alone)",
                [](Context& c) { return check_gsd(c, 3, 300, 4, 0, 0, 0.15f, 0.5f); });
VKSPEC_OP_CHECK("relax_neighbourhood", "N=64 V=1000 k=100 delta=0.2",
                [](Context& c) { return check_relax(c, 64, 1000, 128, 100, 0.2f); });
VKSPEC_OP_CHECK("relax_neighbourhood", "N=5 V=16384 k=1000 delta=0.05",
                [](Context& c) { return check_relax(c, 5, 16384, 1000, 1000, 0.05f); });
VKSPEC_OP_CHECK("relax_neighbourhood", "N=33 V=50 k=50 delta=1 (all)",
                [](Context& c) { return check_relax(c, 33, 50, 50, 50, 1.0f); });
VKSPEC_OP_CHECK("relax_neighbourhood", "N=7 V=300 k=1 delta=0.5 (none)",
                [](Context& c) { return check_relax(c, 7, 300, 8, 1, 0.5f); });
// LANTERN++'s multiplicative budget (lambda - 1) p(x): random rows make p(x) ~ 1/V, so lambda 5
// admits a few neighbours, lambda 1 only zero-mass ones, and a huge lambda all of them.
VKSPEC_OP_CHECK("relax_neighbourhood", "N=64 V=1000 k=100 lambda=5",
                [](Context& c) { return check_relax(c, 64, 1000, 128, 100, 0.0f, 4.0f); });
VKSPEC_OP_CHECK("relax_neighbourhood", "N=5 V=4096 k=11 lambda=20",
                [](Context& c) { return check_relax(c, 5, 4096, 64, 11, 0.0f, 19.0f); });
VKSPEC_OP_CHECK("relax_neighbourhood", "N=9 V=300 k=50 lambda=1 (none)",
                [](Context& c) { return check_relax(c, 9, 300, 64, 50, 0.0f, 0.0f); });
VKSPEC_OP_CHECK("relax_neighbourhood", "N=33 V=50 k=50 lambda=1e6 (all)",
                [](Context& c) { return check_relax(c, 33, 50, 50, 50, 0.0f, 1e6f); });
VKSPEC_OP_CHECK("exclude_neighbourhood", "N=64 V=1000 k=11 lambda=5 count=11",
                [](Context& c) { return check_exclude(c, 64, 1000, 128, 11, 4.0f, 11); });
VKSPEC_OP_CHECK("exclude_neighbourhood", "N=5 V=4096 k=1000 lambda=20 count=1000",
                [](Context& c) { return check_exclude(c, 5, 4096, 1024, 1000, 19.0f, 1000); });
VKSPEC_OP_CHECK("exclude_neighbourhood", "N=9 V=300 k=50 lambda=1 (none moved)",
                [](Context& c) { return check_exclude(c, 9, 300, 64, 50, 0.0f, 50); });
VKSPEC_OP_CHECK("exclude_neighbourhood", "N=33 V=50 k=50 lambda=1e6 count=49 (all but the draft)",
                [](Context& c) { return check_exclude(c, 33, 50, 50, 50, 1e6f, 49); });
VKSPEC_OP_CHECK("spec_accept", "N=4096 V=1000", [](Context& c) { return check_accept(c, 4096, 1000); });
VKSPEC_OP_CHECK("spec_accept", "N=37 V=16384", [](Context& c) { return check_accept(c, 37, 16384); });
VKSPEC_OP_CHECK("spec_accept", "values N=10007", [](Context& c) { return check_accept_values(c, 10007); });
VKSPEC_OP_CHECK("spec_residual_sample", "N=512 V=1000", [](Context& c) { return check_residual(c, 512, 1000, false); });
VKSPEC_OP_CHECK("spec_residual_sample", "resolve N=300 V=777",
                [](Context& c) { return check_residual(c, 300, 777, true); });
VKSPEC_OP_CHECK("spec_residual_sample", "N=21 V=16384", [](Context& c) { return check_residual(c, 21, 16384, false); });
VKSPEC_OP_CHECK("spec_residual_sample", "N=1 V=3", [](Context& c) { return check_residual(c, 1, 3, false); });
VKSPEC_OP_CHECK("spec_residual_sample", "row keys N=333 V=1000",
                [](Context& c) { return check_row_keys(c, 333, 1000); });
VKSPEC_OP_CHECK("pooled_prob", "N=2048 V=1000 k=9 of 16",
                [](Context& c) { return check_pooled(c, 2048, 1000, 16, 9); });
VKSPEC_OP_CHECK("pooled_prob", "N=9 V=16384 k=1 of 4", [](Context& c) { return check_pooled(c, 9, 16384, 4, 1); });

}  // namespace
}  // namespace vkspec

namespace vkspec {
namespace {

// A tree of `nodes` with random parents (each before its child), children drawn from their own q,
// some children's q equal to the residual they meet (accepted unless p is 0 there), one q row of
// zeros at the token (always rejected): accept flags and final tokens must equal the references'.
// keyed: per-row seeds and rounds (ops::RowKeys), as when several images' trees share the dispatch.
CheckResult check_tree_tests(Context& ctx, uint32_t nodes, uint32_t vocab, bool keyed = false) {
  std::mt19937 rng(nodes * 31 + vocab);
  const auto probs = random_probs(nodes, vocab, 41);
  auto q = random_probs(nodes, vocab, 42);
  std::vector<int32_t> parent(nodes, -1);
  uint32_t root = 0;  // keyed: trees of 10 rows one after another, as a batch's images have them
  for (uint32_t c = 1; c < nodes; ++c) {
    if (keyed && c % 10 == 0) root = c;
    parent[c] = c == root ? -1 : static_cast<int32_t>(root + rng() % (c - root));
  }
  if (nodes > 2) std::copy(probs.begin(), probs.begin() + vocab, q.begin() + 1 * vocab);  // q == p for node 1
  auto draft = draw_from(q, nodes, vocab, 43);
  if (nodes > 3) draft[3] = vocab;  // no candidate (>= V): rejected, the residual unchanged
  std::vector<uint32_t> positions(2 * size_t{nodes});
  for (auto& x : positions) x = rng() % 4096;
  const uint64_t seed = 0x1234567890abULL;
  const uint32_t accept_purpose = purpose_word(Purpose::Accept, 5 * 16),
                 residual_purpose = purpose_word(Purpose::Residual, 5);
  std::vector<uint64_t> seeds;
  std::vector<uint32_t> rounds;
  for (uint32_t j = 0; keyed && j < nodes; ++j) {
    seeds.push_back(j % 4 == 0 ? (uint64_t{rng()} << 32) | rng() : seeds.back());  // rows share an image's seed
    rounds.insert(rounds.end(), {static_cast<uint32_t>(rng() % 200 * 8), static_cast<uint32_t>(rng() % 200)});
  }
  const ref::TreeTestResult want = ref::tree_tests(probs, q, vocab, draft, parent, positions,
                                                   {seed, accept_purpose, residual_purpose, seeds, rounds});

  Tensor tp = upload_floats(ctx, probs, DType::F32, {nodes, vocab}, "probs");
  Tensor tq = upload_floats(ctx, q, DType::F32, {nodes, vocab}, "q");
  Tensor tdraft = upload_u32(ctx, draft, "draft");
  Tensor tparent = ctx.tensor(DType::I32, {nodes}, "parent");
  ctx.upload(tparent, parent.data(), parent.size() * 4);
  Tensor tpos = ctx.tensor(DType::U32, {nodes, 2}, "positions");
  ctx.upload(tpos, positions.data(), positions.size() * 4);
  Tensor scratch = ctx.tensor(DType::F32, {nodes, vocab}, "residuals");
  Tensor acc = upload_u32(ctx, std::vector<uint32_t>(nodes, 0), "accept");
  Tensor fin = ctx.tensor(DType::U32, {nodes}, "final");
  Tensor tseeds = ctx.tensor(DType::U32, {nodes, 2}, "seeds"), trounds = ctx.tensor(DType::U32, {nodes, 2}, "rounds");
  ops::TreeTests t;
  t.probs = tp;
  t.q = tq;
  t.draft = tdraft;
  t.parent = tparent;
  t.positions = tpos;
  t.seed = seed;
  t.accept_purpose = accept_purpose;
  t.residual_purpose = residual_purpose;
  t.scratch = scratch;
  t.accept = acc;
  t.final_token = fin;
  if (keyed) {
    ctx.upload(tseeds, seeds.data(), seeds.size() * 8);  // little-endian: low word first, as the op reads
    ctx.upload(trounds, rounds.data(), rounds.size() * 4);
    t.keys = {tseeds.view(), trounds.view()};
  }
  CommandStream s(ctx);
  ops::tree_tests(s, t);
  s.submit_and_wait();
  std::vector<uint32_t> got = download_u32(ctx, acc), got_final = download_u32(ctx, fin);
  got.insert(got.end(), got_final.begin(), got_final.end());
  std::vector<uint32_t> all = want.accept;
  all.insert(all.end(), want.final_token.begin(), want.final_token.end());
  return compare(got, all, std::to_string(nodes) + " nodes V=" + std::to_string(vocab) + " accept + final tokens");
}

VKSPEC_OP_CHECK("tree_tests", "9 nodes V=1000", [](Context& c) { return check_tree_tests(c, 9, 1000); });
VKSPEC_OP_CHECK("tree_tests", "30 nodes V=16384", [](Context& c) { return check_tree_tests(c, 30, 16384); });
VKSPEC_OP_CHECK("tree_tests", "5 nodes V=7", [](Context& c) { return check_tree_tests(c, 5, 7); });
VKSPEC_OP_CHECK("tree_tests", "row keys 40 nodes V=1000",
                [](Context& c) { return check_tree_tests(c, 40, 1000, true); });

}  // namespace
}  // namespace vkspec
