#include "engine/checks/gpt_bench.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "engine/checks/op_bench.h"
#include "engine/model/gpt_batch.h"
#include "engine/ops/sampler.h"
#include "common/error.h"

namespace vkspec {

GptBench::GptBench(Context& ctx, Gpt& gpt) : ctx_(ctx), gpt_(gpt), cache_(gpt.make_cache(0, 2)) {
  const int64_t max_q = gpt.options().max_queries, V = gpt.config().vocab_size;
  positions_ = ctx.tensor(DType::U32, {max_q}, "bench sample positions");
  probs_ = ctx.tensor(DType::F32, {max_q, V}, "bench probabilities");
  tokens_ = ctx.tensor(DType::U32, {max_q}, "bench sampled tokens");
  CommandStream s(ctx);
  for (int64_t l = 0; l < gpt.config().n_layer; ++l) {
    s.fill(cache_.k(l), 0);
    s.fill(cache_.v(l), 0);
  }
  s.submit_and_wait();
}

namespace {

// A condition of the model's kind: class 0, or one token of zeros as caption values (a prompt's,
// with its own unconditional row, for a prompt-driven model).
std::shared_ptr<const Condition> bench_condition(const GptConfig& cfg) {
  if (cfg.model_type == ModelType::c2i) return std::make_shared<ClassLabel>(0);
  const std::vector<float> zeros(static_cast<size_t>(cfg.caption_dim), 0.0f);
  auto c = std::make_shared<CaptionEmbeddings>("bench", 1, cfg.caption_dim, zeros, std::vector<uint8_t>{1});
  if (cfg.input == ConditionInput::Prompt) {
    auto null_form = std::make_shared<CaptionEmbeddings>("bench", 1, cfg.caption_dim, zeros, std::vector<uint8_t>{1});
    null_form->set_prompt("bench", {0}, nullptr);
    c->set_prompt("bench", {0}, null_form);
  }
  return c;
}

}  // namespace

ForwardTiming GptBench::time(int64_t first, int64_t queries, int repeat, int per_submit) {
  const GptConfig& cfg = gpt_.config();
  Context& ctx = ctx_;
  if (queries < 1 || queries > gpt_.options().max_queries)
    throw Error("GPT bench: " + std::to_string(queries) + " queries, the model was built for 1 to " +
                std::to_string(gpt_.options().max_queries));
  if (first < cfg.cls_token_num || first + queries > cfg.seq_len())
    throw Error("GPT bench: " + std::to_string(queries) + " queries from sequence position " + std::to_string(first) +
                " do not fit a sequence of " + std::to_string(cfg.seq_len()) + " positions");
  if (repeat < 1 || per_submit < 1) throw Error("GPT bench: repeat and forwards per submit must be >= 1");

  // Token ids and conditions do not change the work; these are valid ones.
  const std::vector<uint32_t> tokens(static_cast<size_t>(queries), 0u);
  const std::shared_ptr<const Condition> cond = bench_condition(cfg);
  const GptBatch batch(ctx, cfg, GptQueries::causal(cfg, first, queries, tokens, guided_rows(*cond, 2), cache_.slots()),
                       2, cache_.slots());
  std::vector<uint32_t> pos(static_cast<size_t>(queries));
  for (int64_t i = 0; i < queries; ++i) pos[static_cast<size_t>(i)] = static_cast<uint32_t>(first + i);
  ctx.upload(positions_, 0, pos.data(), pos.size() * 4);
  ops::SamplerParams sp;
  sp.cfg = true;
  sp.cfg_scale = cfg.defaults.cfg;
  sp.temperature = cfg.defaults.temperature;
  sp.top_k = static_cast<uint32_t>(std::max<int64_t>(cfg.defaults.top_k, 0));
  sp.top_p = cfg.defaults.top_p;
  sp.mode = ops::SampleMode::Categorical;

  ForwardTiming t;
  t.queries = queries;
  t.kv_len = batch.kv_len();
  CommandStream s(ctx, /*profile=*/true);
  std::vector<double> gpu, wall, busy;
  std::map<std::string, double> kernel_ms;
  auto run_once = [&] {
    // The stream's counts restart with the first command after a submit: per forward, the
    // difference from where the previous forward of this submit ended.
    uint32_t d0 = 0, b0 = 0;
    for (int k = 0; k < per_submit; ++k) {
      const GptOutputs out = gpt_.forward(s, batch, cache_);
      const uint32_t forward_dispatches = s.dispatch_count() - d0;
      ops::sampler(s, out.logits, positions_.view().rows(0, queries), sp, probs_.view().rows(0, queries),
                   tokens_.view().rows(0, queries));
      t.forward_dispatches = forward_dispatches;
      t.sampler_dispatches = s.dispatch_count() - d0 - forward_dispatches;
      t.barriers = s.barrier_count() - b0;
      d0 = s.dispatch_count();
      b0 = s.barrier_count();
    }
    s.submit_and_wait();
  };
  // Untimed: pipelines are built on first use, and a GPU that idled before runs at a fraction of
  // its clock until it has been busy a while (on an H200 the first-measured AR step of LlamaGen-L
  // took 2.7x a later window of 4). A CPU device has no clock to raise: one run.
  const bool cpu = ctx.caps().device_type == "cpu";
  const auto warm_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(cpu ? 0 : 300);
  do run_once();
  while (std::chrono::steady_clock::now() < warm_until);
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = process_cpu_seconds();
    run_once();
    busy.push_back((process_cpu_seconds() - c0) * 1e3 / per_submit);
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
                   per_submit);
    gpu.push_back(s.total_ms() / per_submit);
    for (const CommandTiming& c : s.timings()) kernel_ms[c.label] += c.ms / repeat / per_submit;
  }
  t.gpu_ms = median(gpu);
  t.wall_ms = median(wall);
  t.busy_ms = median(busy);
  for (const auto& [label, ms] : kernel_ms) t.by_kernel.push_back({label, ms});
  std::sort(t.by_kernel.begin(), t.by_kernel.end(),
            [](const CommandTiming& a, const CommandTiming& b) { return a.ms > b.ms; });
  return t;
}

}  // namespace vkspec
