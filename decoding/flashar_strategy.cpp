#include "decoding/flashar_strategy.h"

#include <algorithm>

#include "common/error.h"
#include "engine/ops/attention_mask.h"
#include "engine/ops/sampler.h"

namespace vkspec {
namespace {

FlashArModel& checked_flashar(const ModelSet& m) {
  if (!m.flashar)
    throw Error(
        "flashar: needs a FlashAR model (--flashar FILE, post-trained on the target by tools/train_flashar.py)");
  return *m.flashar;
}

// The set whose target is the FlashAR backbone: the session's forwards, KV cache and vocabulary
// are the post-trained model's.
ModelSet backbone_set(const ModelSet& m) {
  ModelSet s = m;
  s.target = &checked_flashar(m).backbone();
  return s;
}

int64_t diagonal_of(int64_t cell, int64_t width) { return cell / width + cell % width; }

}  // namespace

std::vector<std::pair<int64_t, int64_t>> diagonal_cells(int64_t width, int64_t d) {
  std::vector<std::pair<int64_t, int64_t>> cells;
  for (int64_t r = std::max<int64_t>(0, d - width + 1); r <= std::min(d, width - 1); ++r) cells.emplace_back(r, d - r);
  return cells;
}

FlashArStrategy::FlashArStrategy(const ModelSet& models, const StrategyInputs& in)
    : Strategy("flashar", backbone_set(models), in, checked_flashar(models).config().grid_size),
      model_(*models.flashar),
      branch_cache_(model_.make_branch_cache(target().cache())) {
  Context& ctx = *models.ctx;
  const int64_t W = grid_width(), V = vocab(), R = target().rows();
  h_read_ = ctx.tensor(DType::F32, {R * W, V}, "flashar H logits", MemoryUsage::Readback);
  v_read_ = ctx.tensor(DType::F32, {R * W, V}, "flashar V logits", MemoryUsage::Readback);
  fused_ = ctx.tensor(DType::F32, {R * W, V}, "flashar fused logits", MemoryUsage::Upload);
  positions_ = ctx.tensor(DType::U32, {W}, "flashar target cells", MemoryUsage::Upload);
  probs_ = ctx.tensor(DType::F32, {W, V}, "flashar probabilities");
  tokens_ = ctx.tensor(DType::U32, {W}, "flashar sampled tokens", MemoryUsage::Readback);
}

void FlashArStrategy::run_forward(int64_t d) {
  TargetSession& t = target();
  const int64_t W = grid_width(), P = t.config().cls_token_num;
  const GptBatch* batch = nullptr;
  if (d == 0) {
    batch = &t.causal(0, 1, {});  // the class token: its two heads predict the corner
  } else {
    GptQueries q;
    const auto fed = diagonal_cells(W, d - 1);
    ops::AttentionMaskBuilder mb(static_cast<int64_t>(fed.size()), t.cache().slots());
    for (size_t i = 0; i < fed.size(); ++i) {
      const int64_t cell = fed[i].first * W + fed[i].second, slot = P + cell;
      q.positions.push_back(slot);
      q.slots.push_back(static_cast<uint32_t>(slot));
      q.tokens.push_back(static_cast<uint32_t>(grid_[static_cast<size_t>(cell)]));
      mb.see_prefix(static_cast<int64_t>(i), P);
      // Every cell of an earlier diagonal and of its own (FlashAR's diagonal mask).
      for (int64_t m = 0; m < image_tokens(); ++m)
        if (diagonal_of(m, W) <= d - 1) mb.see(static_cast<int64_t>(i), P + m);
    }
    q.mask = mb.pack();
    q.conditions = t.conditions();
    batch = &t.batch(q);
  }
  fed_ = batch->tokens_per_row();
  CommandStream& s = t.stream();
  t.set_stage(stage::kTarget);
  const FlashArOutputs out = model_.forward(s, *batch, t.cache(), branch_cache_);
  t.set_stage(stage::kSampling);
  const int64_t rows = t.rows() * fed_;
  s.copy(out.h_logits, h_read_.view().rows(0, rows));
  s.copy(out.v_logits, v_read_.view().rows(0, rows));
  t.submit_and_wait();
  const size_t n = static_cast<size_t>(rows * vocab());
  h_.resize(n);
  v_.resize(n);
  t.ctx().download(h_read_, 0, h_.data(), n * 4);
  t.ctx().download(v_read_, 0, v_.data(), n * 4);
  ++nfe_;
}

void FlashArStrategy::fuse(int64_t d) {
  const int64_t W = grid_width(), V = vocab(), R = target().rows();
  const auto targets = diagonal_cells(W, d);
  const auto fed = d == 0 ? std::vector<std::pair<int64_t, int64_t>>{} : diagonal_cells(W, d - 1);
  // The fed query index of cell (r, c) of diagonal d - 1 (cells by ascending row).
  const auto query_of = [&](int64_t r) { return r - fed.front().first; };
  const int64_t n = static_cast<int64_t>(targets.size());
  fused_host_.resize(static_cast<size_t>(R * n * V));
  for (int64_t b = 0; b < R; ++b)
    for (int64_t i = 0; i < n; ++i) {
      const auto [r, c] = targets[static_cast<size_t>(i)];
      float* out = fused_host_.data() + (b * n + i) * V;
      // Row b * fed + query of the forward's outputs.
      const auto row = [&](const std::vector<float>& heads, int64_t query) {
        return heads.data() + (b * fed_ + query) * V;
      };
      if (d == 0) {
        model_.gate().mix(row(h_, 0), row(v_, 0), out);
      } else if (r == 0) {
        std::copy_n(row(h_, query_of(r)), V, out);  // left neighbour (0, c - 1)
      } else if (c == 0) {
        std::copy_n(row(v_, query_of(r - 1)), V, out);  // upper neighbour (r - 1, 0)
      } else {
        model_.gate().mix(row(h_, query_of(r)), row(v_, query_of(r - 1)), out);
      }
    }
}

std::vector<uint32_t> FlashArStrategy::sample(int64_t d) {
  TargetSession& t = target();
  const int64_t W = grid_width(), V = vocab();
  const auto targets = diagonal_cells(W, d);
  const int64_t n = static_cast<int64_t>(targets.size());
  std::vector<uint32_t> cells;
  for (const auto& [r, c] : targets) cells.push_back(static_cast<uint32_t>(r * W + c));
  t.ctx().upload(fused_, 0, fused_host_.data(), fused_host_.size() * 4);
  t.ctx().upload(positions_, 0, cells.data(), cells.size() * 4);
  const ops::SamplerParams sp =
      in_.sampler.op_params(V, in_.seed, ops::SampleMode::Categorical, philox::purpose_word(philox::Purpose::Sample));
  ops::sampler(t.stream(), fused_.view().rows(0, t.rows() * n), positions_.view().rows(0, n), sp,
               probs_.view().rows(0, n), tokens_.view().rows(0, n));
  t.submit_and_wait();
  std::vector<uint32_t> tokens(static_cast<size_t>(n));
  t.ctx().download(tokens_, 0, tokens.data(), tokens.size() * 4);
  return tokens;
}

void FlashArStrategy::decode(StepEvent& e) {
  const int64_t d = step_, W = grid_width();
  run_forward(d);
  fuse(d);
  const std::vector<uint32_t> tokens = sample(d);
  const auto targets = diagonal_cells(W, d);
  for (size_t i = 0; i < targets.size(); ++i) {
    const int64_t cell = targets[i].first * W + targets[i].second;
    const int32_t tok = checked_token(tokens[i], cell);
    grid_[static_cast<size_t>(cell)] = tok;
    ++committed_;
    e.proposed.push_back(static_cast<int32_t>(cell));
    e.proposed_tokens.push_back(tok);
    e.accepted.push_back(static_cast<int32_t>(cell));
  }
}

namespace {

StrategyDescriptor flashar() {
  StrategyDescriptor d;
  d.name = "flashar";
  d.order = 66;  // beside pjd and zipar: parallel, lossy
  d.summary = "a post-trained vertical head and gate beside the model's own: one anti-diagonal of the grid per "
              "forward, H + W - 1 forwards (lossy; needs the FlashAR model)";
  d.reference = "FlashAR (Zhou et al., arXiv 2605.09430; code lxazjk/LlamaGen-FlashAR): vertical branch from a "
                "middle layer, --hv-gate logit gate, anti-diagonal decoding";
  d.lossless = [](const OptionValues&) { return false; };
  d.needs = [](const OptionValues&) {
    StrategyNeeds n;
    n.flashar = true;
    return n;
  };
  d.max_queries = [](const OptionValues&, const GptConfig& cfg) -> int64_t { return cfg.grid_size; };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues&) -> std::unique_ptr<Strategy> {
    return std::make_unique<FlashArStrategy>(m, in);
  };
  return d;
}

const RegisterStrategy kFlashAr(flashar());

}  // namespace
}  // namespace vkspec
