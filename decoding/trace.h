#pragma once
// Trace files: a generation's configuration, final token grid ("tokens", a list of rows) and
// per-step events as JSON. Written by `vkspec generate --trace`, replayed by the viewer.
#include <string>
#include <vector>

#include "decoding/generation.h"

namespace vkspec {

struct TraceConfig {
  std::string model;  // path of the target model
  int64_t grid_size = 0, vocab_size = 0;
  SamplerSettings sampler;
  MethodOptions options;
};

// One JSON document for one or more generations (one per image).
std::string trace_json(const TraceConfig& cfg, const std::vector<Generation>& gens);
// Throws Error naming the path when it cannot be written.
void write_trace(const std::string& path, const TraceConfig& cfg, const std::vector<Generation>& gens);

}  // namespace vkspec
