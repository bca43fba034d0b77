#include "decoding/flashar_strategy.h"

#include <algorithm>
#include <functional>

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

// The inputs with their condition as the FlashAR backbone takes it: the target's inputs made it (a
// Janus-Pro prompt's rows of the target's text table), but the backbone was fine-tuned, its text
// table with it (Gpt::own_condition; LlamaGen's take the condition as given).
StrategyInputs backbone_inputs(const ModelSet& m, StrategyInputs in) {
  if (in.condition)
    if (std::shared_ptr<const Condition> own = checked_flashar(m).backbone().own_condition(*in.condition))
      in.condition = std::move(own);
  return in;
}

std::vector<StrategyInputs> backbone_inputs(const ModelSet& m, const std::vector<StrategyInputs>& in) {
  std::vector<StrategyInputs> out;
  for (const StrategyInputs& i : in) out.push_back(backbone_inputs(m, i));
  return out;
}

int64_t diagonal_of(int64_t cell, int64_t width) { return cell / width + cell % width; }

// Commits image tokens of diagonal d into `grid` and lists them in the step's event.
void commit_diagonal(int64_t d, int64_t width, const uint32_t* tokens, const float* gates, std::vector<int32_t>& grid,
                     int64_t& committed, StepEvent& e, const std::function<int32_t(uint32_t, int64_t)>& checked) {
  const auto cells = diagonal_cells(width, d);
  for (size_t i = 0; i < cells.size(); ++i) {
    const int64_t cell = cells[i].first * width + cells[i].second;
    const int32_t tok = checked(tokens[i], cell);
    grid[static_cast<size_t>(cell)] = tok;
    ++committed;
    e.proposed.push_back(static_cast<int32_t>(cell));
    e.proposed_tokens.push_back(tok);
    e.accepted.push_back(static_cast<int32_t>(cell));
    e.gates.push_back(gates[i]);
  }
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> diagonal_cells(int64_t width, int64_t d) {
  std::vector<std::pair<int64_t, int64_t>> cells;
  for (int64_t r = std::max<int64_t>(0, d - width + 1); r <= std::min(d, width - 1); ++r) cells.emplace_back(r, d - r);
  return cells;
}

ModelSet flashar_session_set(const ModelSet& models) {
  ModelSet s = models;
  s.target = &checked_flashar(models).backbone();
  return s;
}

FlashArDiagonals::FlashArDiagonals(FlashArModel& model, TargetSession& session)
    : model_(model),
      t_(session),
      width_(session.config().grid_size),
      vocab_(session.config().vocab_size),
      branch_cache_(model.make_branch_cache(session.cache())) {
  Context& ctx = session.ctx();
  const int64_t W = width_, V = vocab_, R = session.rows(), G = session.images();
  sources_ = ctx.tensor(DType::U32, {R * W, 3}, "flashar fusion sources", MemoryUsage::Upload);
  fused_ = ctx.tensor(DType::F32, {R * W, V}, "flashar fused logits");
  gates_ = ctx.tensor(DType::F32, {R * W}, "flashar gates", MemoryUsage::Readback);
  positions_ = ctx.tensor(DType::U32, {G * W}, "flashar target cells", MemoryUsage::Upload);
  seeds_ = ctx.tensor(DType::U32, {G * W, 2}, "flashar row seeds", MemoryUsage::Upload);
  probs_ = ctx.tensor(DType::F32, {G * W, V}, "flashar probabilities");
  tokens_ = ctx.tensor(DType::U32, {G * W}, "flashar sampled tokens", MemoryUsage::Readback);
  // The condition positions below the last (t2i's caption) into both caches, with the first
  // submit: the session was made without its own prefill, which would fill the backbone's alone.
  t_.prefill_queries(model.backbone(), t_.cache(), [&](const GptBatch& b) {
    t_.set_stage(stage::kTarget);
    model_.forward(t_.stream(), b, t_.cache(), branch_cache_);
    t_.set_stage(stage::kSampling);
  });
}

// The last condition position for d = 0 (its two heads predict the corner); else the cells of diagonal d - 1,
// each seeing the prefix, every cell of an earlier diagonal and of its own (the diagonal mask).
const GptBatch& FlashArDiagonals::queries(int64_t d, const std::vector<const std::vector<int32_t>*>& grids) {
  if (d == 0) return t_.causal(0, 1, {});
  const int64_t W = width_, P = t_.config().cls_token_num, N = W * W;
  const auto fed = diagonal_cells(W, d - 1);
  GptQueries q;
  q.images = t_.images();
  ops::AttentionMaskBuilder mb(static_cast<int64_t>(fed.size()), t_.cache().slots());
  for (size_t i = 0; i < fed.size(); ++i) {
    const int64_t slot = P + fed[i].first * W + fed[i].second;
    q.positions.push_back(slot);
    q.slots.push_back(static_cast<uint32_t>(slot));
    mb.see_prefix(static_cast<int64_t>(i), P);
    for (int64_t m = 0; m < N; ++m)
      if (diagonal_of(m, W) <= d - 1) mb.see(static_cast<int64_t>(i), P + m);
  }
  for (const std::vector<int32_t>* grid : grids)
    for (const auto& [r, c] : fed) q.tokens.push_back(static_cast<uint32_t>((*grid)[static_cast<size_t>(r * W + c)]));
  q.mask = mb.pack();
  q.conditions = t_.conditions();
  return t_.batch(q);
}

// Fused row b * n + i for batch row b (the images' conditional rows, then their null rows: the
// sampler's CfgLayout::Halves over image-major rows) and target i of diagonal d: the corner gated
// from the last condition position's two heads; row 0 H of the left neighbour (r, c - 1); column 0 V of the
// upper one (r - 1, c); the rest gated from both. The fed query of cell (r', d - 1 - r') is
// r' - the first fed row.
int64_t FlashArDiagonals::write_sources(int64_t d, int64_t fed) {
  constexpr uint32_t kGated = 0, kH = 1, kV = 2;
  const int64_t R = t_.rows();
  const auto targets = diagonal_cells(width_, d);
  const int64_t n = static_cast<int64_t>(targets.size());
  const int64_t first = d == 0 ? 0 : diagonal_cells(width_, d - 1).front().first;
  std::vector<uint32_t> src;
  for (int64_t b = 0; b < R; ++b)
    for (const auto& [r, c] : targets) {
      const auto row = [&](int64_t fed_row) { return static_cast<uint32_t>(b * fed + fed_row - first); };
      if (d == 0)
        src.insert(src.end(), {row(0), row(0), kGated});
      else if (r == 0)
        src.insert(src.end(), {row(r), row(r), kH});
      else if (c == 0)
        src.insert(src.end(), {row(r - 1), row(r - 1), kV});
      else
        src.insert(src.end(), {row(r), row(r - 1), kGated});
    }
  t_.ctx().upload(sources_, 0, src.data(), src.size() * 4);
  return R * n;
}

FlashArDiagonals::Sampled FlashArDiagonals::step(int64_t d, const std::vector<const std::vector<int32_t>*>& grids,
                                                 const std::vector<uint64_t>& seeds, const SamplerSettings& sampler) {
  const GptBatch& batch = queries(d, grids);
  CommandStream& s = t_.stream();
  t_.set_stage(stage::kTarget);
  const FlashArOutputs heads = model_.forward(s, batch, t_.cache(), branch_cache_);
  t_.set_stage(stage::kSampling);
  const int64_t fused_rows = write_sources(d, batch.tokens_per_row());
  model_.fuse(s, heads, sources_.view().rows(0, fused_rows), fused_.view().rows(0, fused_rows),
              gates_.view().rows(0, fused_rows));
  const int64_t W = width_, G = t_.images();
  const auto targets = diagonal_cells(W, d);
  const int64_t n = static_cast<int64_t>(targets.size()), rows = G * n;
  std::vector<uint32_t> cells, row_seeds;
  for (int64_t g = 0; g < G; ++g)
    for (const auto& [r, c] : targets) {
      cells.push_back(static_cast<uint32_t>(r * W + c));
      const uint64_t seed = seeds[static_cast<size_t>(g)];
      row_seeds.push_back(static_cast<uint32_t>(seed));
      row_seeds.push_back(static_cast<uint32_t>(seed >> 32));
    }
  Context& ctx = t_.ctx();
  ctx.upload(positions_, 0, cells.data(), cells.size() * 4);
  ctx.upload(seeds_, 0, row_seeds.data(), row_seeds.size() * 4);
  const ops::SamplerParams sp =
      sampler.op_params(vocab_, seeds[0], ops::SampleMode::Categorical, philox::purpose_word(philox::Purpose::Sample));
  ops::sampler(s, fused_.view().rows(0, fused_rows), positions_.view().rows(0, rows), sp, probs_.view().rows(0, rows),
               tokens_.view().rows(0, rows), {}, seeds_.view().rows(0, rows));
  t_.submit_and_wait();
  Sampled out{std::vector<uint32_t>(static_cast<size_t>(rows)), std::vector<float>(static_cast<size_t>(rows))};
  ctx.download(tokens_, 0, out.tokens.data(), out.tokens.size() * 4);
  // Fused rows [0, G n): the images' conditional rows, image-major, as the tokens.
  ctx.download(gates_, 0, out.gates.data(), out.gates.size() * 4);
  return out;
}

FlashArStrategy::FlashArStrategy(const ModelSet& models, const StrategyInputs& in)
    : Strategy("flashar", flashar_session_set(models), backbone_inputs(models, in),
               checked_flashar(models).config().grid_size, 0, false),
      diagonals_(*models.flashar, target()) {}

void FlashArStrategy::decode(StepEvent& e) {
  const int64_t d = step_;
  const FlashArDiagonals::Sampled s = diagonals_.step(d, {&grid_}, {in_.seed}, in_.sampler);
  ++nfe_;
  commit_diagonal(d, grid_width(), s.tokens.data(), s.gates.data(), grid_, committed_, e,
                  [&](uint32_t t, int64_t cell) { return checked_token(t, cell); });
}

FlashArBatchStrategy::FlashArBatchStrategy(const ModelSet& models, const std::vector<StrategyInputs>& in)
    : BatchStrategy("flashar", flashar_session_set(models), backbone_inputs(models, in),
                    checked_flashar(models).config().grid_size, 0, 0, false),
      diagonals_(*models.flashar, target()) {}

void FlashArBatchStrategy::decode(std::vector<StepEvent>& events, std::vector<bool>& advanced) {
  const int64_t d = step_, W = target().config().grid_size;
  std::vector<const std::vector<int32_t>*> grids;
  std::vector<uint64_t> seeds;
  for (const Image& im : images_) {
    grids.push_back(&im.grid);
    seeds.push_back(im.in.seed);
  }
  const FlashArDiagonals::Sampled s = diagonals_.step(d, grids, seeds, images_[0].in.sampler);
  const size_t n = diagonal_cells(W, d).size();
  for (size_t g = 0; g < images_.size(); ++g) {
    Image& im = images_[g];
    ++im.nfe;
    commit_diagonal(d, W, s.tokens.data() + g * n, s.gates.data() + g * n, im.grid, im.committed, events[g],
                    [&](uint32_t t, int64_t cell) { return checked_token(t, g, cell); });
    advanced[g] = true;
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
  // Every image takes H + W - 1 steps: no lanes to free.
  d.make_batch = [](const ModelSet& m, const std::vector<StrategyInputs>& in, const OptionValues&,
                    int64_t) -> std::unique_ptr<BatchStrategy> {
    return std::make_unique<FlashArBatchStrategy>(m, in);
  };
  return d;
}

const RegisterStrategy kFlashAr(flashar());

}  // namespace
}  // namespace vkspec
