#include "decoding/sjd_pac_step.h"

#include <algorithm>

#include "common/error.h"
#include "decoding/sjd_pac_shape.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

// Independent draws per node and candidate: the extra candidates are the first draws not yet taken.
constexpr int64_t kDrawsPerCandidate = 3;
// A sibling's acceptance uniform is drawn under Accept round step * 8 + sibling (ops::tree_tests).
constexpr uint32_t kSiblingRounds = 8;
static_assert(kSjdPacMaxWidth <= kSiblingRounds);

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

const SjdPacOptions& check_sjd_pac_options(const SjdPacOptions& o, int64_t vocab) {
  if (o.width < 1 || o.width > kSjdPacMaxWidth || o.depth < 1 || o.depth > kSjdPacMaxDepth)
    throw Error("sjd-pac: --width " + str(o.width) + " or --depth " + str(o.depth) + " out of range (1.." +
                str(kSjdPacMaxWidth) + ", 1.." + str(kSjdPacMaxDepth) + ")");
  if (o.width > vocab)
    throw Error("sjd-pac: --width " + str(o.width) + " asks for more distinct candidates than the " + str(vocab) +
                " tokens of the vocabulary");
  const int64_t tree = sjd_pac_tree_nodes(o.width, o.depth);
  if (tree > o.window)
    throw Error("sjd-pac: --width " + str(o.width) + " --depth " + str(o.depth) + " make a tree of " + str(tree) +
                " nodes with the root, more than --window " + str(o.window) + " (the nodes per forward)");
  return o;
}

int64_t sjd_pac_max_queries(const SjdPacOptions& o) { return o.window + o.depth - 1; }

int64_t sjd_pac_extra_rows(const SjdPacOptions& o) { return std::max<int64_t>((o.width - 1) * (o.depth - 1), 1); }

SjdPacStep::SjdPacStep(Context& ctx, const SjdPacOptions& opt, int64_t rows, int64_t vocab, const std::string& owner)
    : opt_(opt), draws_per_node_(opt.width > 1 ? kDrawsPerCandidate * opt.width : 0) {
  const int64_t draws = std::max<int64_t>(draws_per_node_, 1);
  probs_ = ctx.tensor(DType::F32, {rows, vocab}, owner + " target probabilities");
  q_tree_ = ctx.tensor(DType::F32, {rows, vocab}, owner + " candidate distributions");
  residuals_ = ctx.tensor(DType::F32, {rows, vocab}, owner + " residual distributions");
  if (opt.path == SjdPacPath::Longest)
    first_child_q_ = ctx.tensor(DType::F32, {rows, vocab}, owner + " first children's distributions");
  tokens_ = ctx.tensor(DType::U32, {rows}, owner + " candidate tokens", MemoryUsage::Upload);
  parents_ = ctx.tensor(DType::I32, {rows}, owner + " tree parents", MemoryUsage::Upload);
  test_pos_ = ctx.tensor(DType::U32, {rows, 2}, owner + " tree test positions", MemoryUsage::Upload);
  draw_pos_ = ctx.tensor(DType::U32, {rows}, owner + " draw positions", MemoryUsage::Upload);
  seeds_ = ctx.tensor(DType::U32, {rows, 2}, owner + " row seeds", MemoryUsage::Upload);
  rounds_ = ctx.tensor(DType::U32, {rows, 2}, owner + " row test rounds", MemoryUsage::Upload);
  draw_rounds_ = ctx.tensor(DType::U32, {draws, rows}, owner + " row draw rounds", MemoryUsage::Upload);
  accept_ = ctx.tensor(DType::U32, {rows}, owner + " acceptances", MemoryUsage::Readback);
  final_ = ctx.tensor(DType::U32, {rows}, owner + " next tokens", MemoryUsage::Readback);
  draws_ = ctx.tensor(DType::U32, {draws, rows}, owner + " draws", MemoryUsage::Readback);
}

void SjdPacStep::begin(int64_t R) {
  R_ = R;
  rows_.assign(static_cast<size_t>(R), Row{});
}

void SjdPacStep::upload(Context& ctx) {
  const size_t R = static_cast<size_t>(R_), D = static_cast<size_t>(draws_per_node_), stride = draws_.shape()[1];
  std::vector<uint32_t> tokens(R), pos(2 * R), draw_pos(R), rounds(2 * R), draw_rounds(std::max<size_t>(D, 1) * stride);
  std::vector<int32_t> parents(R);
  std::vector<uint64_t> seeds(R);
  for (size_t j = 0; j < R; ++j) {
    const Row& r = rows_[j];
    tokens[j] = r.token;
    parents[j] = r.parent;
    pos[2 * j] = r.accept_pos;
    pos[2 * j + 1] = r.final_pos;
    draw_pos[j] = r.final_pos;  // the draws are for the position the node predicts
    seeds[j] = r.seed;
    rounds[2 * j] = r.round * kSiblingRounds;
    rounds[2 * j + 1] = r.round;
    for (size_t d = 0; d < D; ++d)
      draw_rounds[d * stride + j] = r.round * static_cast<uint32_t>(D) + static_cast<uint32_t>(d);
  }
  ctx.upload(tokens_, 0, tokens.data(), R * 4);
  ctx.upload(parents_, 0, parents.data(), R * 4);
  ctx.upload(test_pos_, 0, pos.data(), R * 8);
  ctx.upload(draw_pos_, 0, draw_pos.data(), R * 4);
  ctx.upload(seeds_, 0, seeds.data(), R * 8);  // low word first, as the ops read
  ctx.upload(rounds_, 0, rounds.data(), R * 8);
  ctx.upload(draw_rounds_, 0, draw_rounds.data(), draw_rounds.size() * 4);
}

void SjdPacStep::record(CommandStream& s, Context& ctx, const TensorView& logits, const ops::SamplerParams& none) {
  upload(ctx);
  const int64_t R = R_;
  ops::sampler(s, logits, {}, none, probs_.view().rows(0, R), {});
  ops::TreeTests t;
  t.probs = probs_.view().rows(0, R);
  t.q = q_tree_.view().rows(0, R);
  t.draft = tokens_.view().rows(0, R);
  t.parent = parents_.view().rows(0, R);
  t.positions = test_pos_.view().rows(0, R);
  t.accept_purpose = philox::purpose_word(philox::Purpose::Accept);
  t.residual_purpose = philox::purpose_word(philox::Purpose::Residual);
  t.scratch = residuals_.view().rows(0, R);
  t.accept = accept_.view().rows(0, R);
  t.final_token = final_.view().rows(0, R);
  t.keys = {seeds_.view().rows(0, R), rounds_.view().rows(0, R)};
  ops::tree_tests(s, t);
  record_draws(s);
}

void SjdPacStep::record_draws(CommandStream& s) {
  if (draws_per_node_ == 0) return;
  const int64_t R = R_, stride = draws_.shape()[1];
  // --path first draws from each node's p (the residual of p against itself is empty, so
  // spec_residual_sample draws from p); --path longest, as the released code, from the residual
  // norm(max(p - q, 0)) of the node's first child (zero without one: p itself).
  TensorView from = probs_.view().rows(0, R);
  if (opt_.path == SjdPacPath::Longest) {
    std::vector<CopyRegion> rows;
    for (int64_t j = 0; j < R; ++j) {
      const int64_t c = rows_[static_cast<size_t>(j)].first_child;
      if (c < 0)
        s.fill(first_child_q_.view().rows(j, 1), 0u);
      else
        rows.push_back({q_tree_.view().rows(c, 1), first_child_q_.view().rows(j, 1)});
    }
    s.copy(rows);
    from = first_child_q_.view().rows(0, R);
  }
  const TensorView out = draws_.view().reshape({draws_.shape()[0] * stride});
  const TensorView rounds = draw_rounds_.view().reshape({draw_rounds_.shape()[0] * stride});
  for (int64_t d = 0; d < draws_per_node_; ++d)
    ops::spec_residual_sample(s, probs_.view().rows(0, R), from, draw_pos_.view().rows(0, R),
                              {0,
                               philox::purpose_word(philox::Purpose::Draft),
                               {seeds_.view().rows(0, R), rounds.rows(d * stride, R)}},
                              out.rows(d * stride, R));
}

void SjdPacStep::download(Context& ctx) {
  const size_t R = static_cast<size_t>(R_), stride = static_cast<size_t>(draws_.shape()[1]);
  accept_host_.resize(R);
  final_host_.resize(R);
  ctx.download(accept_, 0, accept_host_.data(), R * 4);
  ctx.download(final_, 0, final_host_.data(), R * 4);
  draws_host_.resize(static_cast<size_t>(draws_per_node_) * stride);
  if (draws_per_node_ > 0) ctx.download(draws_, 0, draws_host_.data(), draws_host_.size() * 4);
}

SjdPacReadback SjdPacStep::image(int64_t first, int64_t M) const {
  auto slice = [&](const std::vector<uint32_t>& v, int64_t from) {
    return std::vector<uint32_t>(v.begin() + from, v.begin() + from + M);
  };
  SjdPacReadback r{slice(accept_host_, first), slice(final_host_, first), {}};
  for (int64_t d = 0; d < draws_per_node_; ++d) r.draws.push_back(slice(draws_host_, d * draws_.shape()[1] + first));
  return r;
}

}  // namespace vkspec
