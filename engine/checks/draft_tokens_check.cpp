// The drafter's top tokens and point masses against their CPU references: tokens and values must be
// identical (error = the number of differing entries).
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
