#include "decoding/trace.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace vkspec {
namespace {

nlohmann::json rows_of(const std::vector<int32_t>& grid, int64_t w) {
  nlohmann::json rows = nlohmann::json::array();
  for (size_t i = 0; i < grid.size(); i += static_cast<size_t>(w))
    rows.push_back(std::vector<int32_t>(grid.begin() + static_cast<ptrdiff_t>(i),
                                        grid.begin() + static_cast<ptrdiff_t>(std::min(grid.size(), i + w))));
  return rows;
}

nlohmann::json event_json(const StepEvent& e) {
  nlohmann::json j = {{"step", e.step},
                      {"proposed", e.proposed},
                      {"proposed_tokens", e.proposed_tokens},
                      {"accepted", e.accepted},
                      {"rejected", e.rejected},
                      {"resampled", e.resampled},
                      {"islands", e.islands},
                      {"committed", e.committed},
                      {"nfe", e.nfe},
                      {"draft_forwards", e.draft_forwards},
                      {"device_ms", e.device_ms},
                      {"wall_ms", e.wall_ms}};
  // Only methods that verify groups write them, so every other method's trace stays as it was.
  if (!e.groups.empty()) j["groups"] = e.groups;
  if (e.tree_depth > 0) j["tree_size"] = {e.tree_depth, e.tree_width};
  if (!e.verified) j["verified"] = false;
  if (!e.gates.empty()) j["gates"] = e.gates;
  return j;
}

}  // namespace

std::string trace_json(const TraceConfig& cfg, const std::vector<Generation>& gens) {
  nlohmann::json root;
  root["format"] = "vkspec-trace-1";
  root["config"] = {{"model", cfg.model},
                    {"grid_size", cfg.grid_size},
                    {"vocab_size", cfg.vocab_size},
                    {"cfg", cfg.sampler.cfg},
                    {"temperature", cfg.sampler.temperature},
                    {"top_k", cfg.sampler.top_k},
                    {"top_p", cfg.sampler.top_p},
                    {"options", cfg.options}};
  // Only when on: a trace without it (every trace before it existed) sampled without it.
  if (cfg.sampler.entropy.on) {
    const ops::EntropyTemperature& e = cfg.sampler.entropy;
    root["config"]["entropy_temperature"] = {{"a", e.a}, {"b", e.b}, {"c", e.c}};
  }
  nlohmann::json images = nlohmann::json::array();
  for (const Generation& g : gens) {
    nlohmann::json im = {{"method", g.method},
                         {"seed", g.seed},
                         {"nfe", g.nfe},
                         {"draft_forwards", g.draft_forwards},
                         {"wall_ms", g.wall_ms},
                         {"device_ms", g.device_ms},
                         {"tokens", rows_of(g.tokens, cfg.grid_size)}};
    // A class-conditional image keeps its "class"; "condition" says what it was generated from.
    if (g.class_id >= 0) im["class"] = g.class_id;
    if (g.class_id < 0) im["condition"] = g.condition;
    if (!g.prompt.empty()) im["prompt"] = g.prompt;
    nlohmann::json ev = nlohmann::json::array();
    for (const StepEvent& e : g.events) ev.push_back(event_json(e));
    im["events"] = ev;
    images.push_back(im);
  }
  root["images"] = images;
  // The first image's grid at the top level too: the common single-image case reads "tokens".
  if (!gens.empty()) root["tokens"] = rows_of(gens.front().tokens, cfg.grid_size);
  return root.dump();
}

void write_trace(const std::string& path, const TraceConfig& cfg, const std::vector<Generation>& gens) {
  std::ofstream f(path);
  if (!f) throw Error("cannot write trace " + path);
  f << trace_json(cfg, gens) << "\n";
  if (!f) throw Error("error writing trace " + path);
}

}  // namespace vkspec
