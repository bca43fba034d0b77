#pragma once
// Timing of whole GPT forwards, the model-level twin of op_bench.h: one AR step (one query per
// batch row) or one verification forward over a window of queries, each followed by the sampler
// as a decoding step runs it, at a KV cache filled to a chosen point. `vkspec bench --synthetic`
// runs it on LlamaGen-shaped models with generated weights.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/gpt.h"
#include "engine/vk/command_stream.h"

namespace vkspec {

struct ForwardTiming {
  int64_t queries = 0;                   // per batch row
  int64_t kv_len = 0;                    // slots the last query attends to
  double gpu_ms = 0;                     // median per-submit sum of command timestamps (0: the device has none)
  double wall_ms = 0;                    // median of record + submit + wait on the host
  double busy_ms = 0;                    // median CPU time of this process per submit (a CPU device's own work)
  uint32_t forward_dispatches = 0;       // compute dispatches of Gpt::forward
  uint32_t sampler_dispatches = 0;       // and of the sampler after it
  uint32_t barriers = 0;                 // pipeline barriers in the submit
  std::vector<CommandTiming> by_kernel;  // GPU ms per pipeline (median run), largest first

  double ms() const { return gpu_ms > 0 ? gpu_ms : wall_ms; }  // what reports quote
};

class GptBench {
 public:
  // A two-row (CFG) KV cache of zeros (attention costs the same for any values) and the sampler's
  // outputs for up to the model's max_queries. The sampler uses the model's default settings.
  GptBench(Context& ctx, Gpt& gpt);

  // The forward over `queries` causal queries per batch row at sequence positions
  // [first, first + queries) (first = 1 + image tokens already in the cache), then the CFG
  // sampler over every query; once untimed (pipelines get built), then `repeat` times.
  // Throws when the window does not fit the sequence or the model's max_queries. per_submit
  // forwards (each with its sampler) share one submit and the times are per forward: with 16, an
  // AR step without the host's round trip (ar --tokens-per-submit).
  ForwardTiming time(int64_t first, int64_t queries, int repeat, int per_submit = 1);

 private:
  Context& ctx_;
  Gpt& gpt_;
  KvCache cache_;
  Tensor positions_, probs_, tokens_;
};

}  // namespace vkspec
