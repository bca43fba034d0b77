#include "engine/ops/sampler.h"

#include <cmath>

#include "engine/ops/dispatch_util.h"
#include "engine/ops/row_window.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {
namespace {

bool is_index_type(DType t) { return t == DType::U32 || t == DType::I32; }

// The ranges under which step E's arithmetic stays within det_math's (recip_det of T <= 2e4).
void check_entropy_temperature(const SamplerParams& p) {
  const EntropyTemperature& e = p.entropy;
  if (!e.on) return;
  auto in = [](float x, float lo, float hi) { return std::isfinite(x) && x >= lo && x <= hi; };
  require(in(e.a, 0, 100) && in(e.c, 0, 100) && e.a + e.c > 0 && in(e.b, 1e-3f, 1e3f), "sampler",
          "entropy temperature: a and c must be in [0, 100] (not both 0), b in [0.001, 1000]");
  require(p.temperature > 0 && p.temperature <= 100, "sampler",
          "entropy temperature: the base temperature must be in (0, 100]");
}

// Throws naming the bad argument; returns the number of rows sampled.
int64_t checked_rows(const TensorView& logits, const TensorView& positions, const SamplerParams& params,
                     const TensorView& probs, const TensorView& tokens, const TensorView& purposes,
                     const TensorView& seeds) {
  const char* op = "sampler";
  require(logits.dtype == DType::F32 && logits.shape.rank == 2, op,
          [&] { return "logits must be f32 [rows, vocab], got " + logits.shape.str(); });
  const int64_t in_rows = logits.shape[0], vocab = logits.shape[1];
  const int64_t rows = params.cfg ? in_rows / 2 : in_rows;
  require(!params.cfg || in_rows % 2 == 0, op,
          [&] { return "CFG logits need an even row count, got " + logits.shape.str(); });
  require(vocab >= 1 && vocab < (int64_t{1} << 24), op,
          [&] { return "vocab must be in [1, 2^24), got " + logits.shape.str(); });
  require(probs.dtype == DType::F32 && probs.shape == Shape({rows, vocab}), op, [&] {
    return "probs must be f32 " + Shape({rows, vocab}).str() + ", got " + probs.shape.str();
  });
  const bool wants_tokens = params.mode != SampleMode::None;
  const bool wants_positions = params.mode == SampleMode::Categorical || params.mode == SampleMode::GumbelMax;
  if (wants_tokens)
    require(tokens.buffer && is_index_type(tokens.dtype) && tokens.numel() == rows, op, [&] {
      return "tokens must be u32/i32 with " + std::to_string(rows) + " elements, got " + tokens.shape.str();
    });
  if (wants_positions)
    require(positions.buffer && is_index_type(positions.dtype) && positions.numel() == rows, op, [&] {
      return "positions must be u32/i32 with " + std::to_string(rows) + " elements, got " + positions.shape.str();
    });
  const bool per_row_purpose = purposes.buffer != VK_NULL_HANDLE;
  if (per_row_purpose)
    require(wants_positions && is_index_type(purposes.dtype) && purposes.numel() == rows, op, [&] {
      return "purposes must be u32/i32 with " + std::to_string(rows) +
             " elements, for a mode that draws random numbers; got " + purposes.shape.str();
    });
  if (seeds.buffer != VK_NULL_HANDLE)
    require(wants_positions && is_index_type(seeds.dtype) && seeds.numel() == 2 * rows, op, [&] {
      return "seeds must be u32/i32 [" + std::to_string(rows) + ", 2], for a mode that draws random numbers; got " +
             seeds.shape.str();
    });
  require(std::isfinite(params.temperature) && std::isfinite(params.top_p) && std::isfinite(params.cfg_scale), op,
          "temperature, top_p and cfg_scale must be finite");
  check_entropy_temperature(params);
  return rows;
}

}  // namespace

void sampler(CommandStream& s, const TensorView& logits, const TensorView& positions, const SamplerParams& params,
             const TensorView& probs, const TensorView& tokens, const TensorView& purposes, const TensorView& seeds) {
  const char* op = "sampler";
  const int64_t rows = checked_rows(logits, positions, params, probs, tokens, purposes, seeds);
  if (rows == 0) return;

  Context& ctx = s.context();
  const int64_t vocab = logits.shape[1];
  const bool wants_tokens = params.mode != SampleMode::None;
  const bool wants_positions = params.mode == SampleMode::Categorical || params.mode == SampleMode::GumbelMax;
  const bool per_row_purpose = purposes.buffer != VK_NULL_HANDLE;
  const bool per_row_seed = seeds.buffer != VK_NULL_HANDLE;
  const uint32_t V = static_cast<uint32_t>(vocab);
  const bool interleaved = params.cfg && params.cfg_layout == CfgLayout::Interleaved;
  const bool entropy = params.entropy.on;
  const uint32_t stride = interleaved ? 2 : 1;
  const uint64_t row_bytes = uint64_t{stride} * V * 4;
  const uint32_t batch = rows_per_dispatch(ctx, row_bytes, static_cast<uint64_t>(rows), op);
  const uint32_t wg = chunk_workgroup_size(ctx, V);
  const Pipeline& pipe = ctx.pipeline(shaders::sampler, {wg});

  for (uint32_t r0 = 0; r0 < rows; r0 += batch) {
    const uint32_t n = std::min<uint32_t>(batch, static_cast<uint32_t>(rows) - r0);
    const Window cond = window(ctx, logits, uint64_t{r0} * stride * V, uint64_t{n} * stride * V);
    Window uncond = cond;
    if (params.cfg && !interleaved) uncond = window(ctx, logits, (uint64_t{r0} + rows) * V, uint64_t{n} * V);
    if (interleaved) uncond.offset += V;
    const Window pr = window(ctx, probs, uint64_t{r0} * V, uint64_t{n} * V);
    // Unused bindings are filled with views already bound with the same access.
    const Window pos = wants_positions ? window(ctx, positions, r0, n) : cond;
    const Window tok = wants_tokens ? window(ctx, tokens, r0, n) : pr;
    const Window pur = per_row_purpose ? window(ctx, purposes, r0, n) : cond;
    const Window sd = per_row_seed ? window(ctx, seeds, uint64_t{r0} * 2, uint64_t{n} * 2) : cond;
    struct {
      uint32_t rows, vocab, cond_off, uncond_off, row_stride, pos_off, probs_off, tok_off, cfg, top_k, top_p24;
      float inv_temp, cfg_scale;
      uint32_t mode, seed_lo, seed_hi, purpose, per_row_purpose, purpose_off;
      uint32_t entropy;
      float temp, ent_a, ent_nb, ent_c;
      uint32_t per_row_seed, seed_off;
    } push{n,
           V,
           cond.offset,
           uncond.offset,
           stride,
           pos.offset,
           pr.offset,
           tok.offset,
           params.cfg ? 1u : 0u,
           params.top_k < V ? params.top_k : 0u,
           top_p_fixed(params.top_p),
           entropy ? 1.0f : inverse_temperature(params.temperature),
           params.cfg_scale,
           static_cast<uint32_t>(params.mode),
           static_cast<uint32_t>(params.seed),
           static_cast<uint32_t>(params.seed >> 32),
           params.purpose,
           per_row_purpose ? 1u : 0u,
           pur.offset,
           entropy ? 1u : 0u,
           params.temperature,
           params.entropy.a,
           entropy_neg_inv_b(params.entropy.b),
           params.entropy.c,
           per_row_seed ? 1u : 0u,
           sd.offset};
    const Grid g = grid_1d(ctx, n, 1);
    s.dispatch(pipe, {cond.view, uncond.view, pos.view, pr.view, tok.view, pur.view, sd.view}, push, g.x, g.y);
  }
}

}  // namespace vkspec::ops
