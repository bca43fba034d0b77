// vkspec bench --synthetic B|L|XL: LlamaGen-shaped GPTs with generated f16 weights (built in
// memory, no files), timed per AR step and per verification forward over windows of queries, at
// a KV cache filled to the middle of the image, with two batch rows (classifier-free guidance).
// Ends with images/s per method projected from the shipped model's NFE (nfe_projection.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/nfe_projection.h"
#include "cli/output_path.h"
#include "cli/run_info.h"
#include "common/error.h"
#include "decoding/strategy_registry.h"
#include "engine/checks/gpt_bench.h"
#include "engine/model/synthetic_gpt.h"
#include "frontend/arg_parser.h"
#include "frontend/device_choice.h"

namespace vkspec::cli {
namespace {

// Seconds since t0.
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// "tiny" is for the tests: the same code path in a second, even under the validation layer.
GptShape shape_named(const std::string& name, int64_t grid) {
  if (name != "tiny") return llamagen_shape(name, grid);
  GptShape s;
  s.dim = 64;
  s.n_layer = 2;
  s.n_head = 2;
  s.vocab_size = 512;
  s.num_classes = 10;
  s.grid_size = grid;
  s.ffn_hidden = GptConfig::llamagen_ffn_hidden(s.dim);
  return s;
}

std::vector<int64_t> parse_windows(const std::string& text, int64_t most) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    const long long w = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0')
      throw Error("bench: --windows expects a comma-separated list of integers, got '" + text + "'");
    if (w < 1 || w > most)
      throw Error("bench: --windows " + item + " must be in [1, " + std::to_string(most) +
                  "]: the window starts in the middle of the image and must end inside it");
    out.push_back(w);
  }
  if (out.empty()) throw Error("bench: --windows is empty");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Bytes a forward streams from the weight matrices (the embeddings are gathered, not streamed),
// and multiply-adds per query row.
double matrix_params(const GptShape& s) {
  const double D = static_cast<double>(s.dim), H = static_cast<double>(s.ffn_hidden);
  return static_cast<double>(s.n_layer) * (4 * D * D + 3 * D * H) + static_cast<double>(s.vocab_size) * D;
}

// Device bytes the model needs, to refuse early (before generating gigabytes) what cannot fit.
uint64_t device_bytes_needed(const GptShape& s, int64_t max_queries) {
  const double D = static_cast<double>(s.dim), V = static_cast<double>(s.vocab_size);
  const double weights = 2 * (matrix_params(s) + (V + s.num_classes + 1) * D) + 4 * D * (2 * s.n_layer + 1);
  const double slots = static_cast<double>(s.grid_size * s.grid_size + 1);
  const double kv = 2.0 * 2 * 2 * slots * D * static_cast<double>(s.n_layer);  // k and v, 2 rows, f16
  const double H = static_cast<double>(s.ffn_hidden);
  const double acts = 4.0 * 2 * static_cast<double>(max_queries) * (8 * D + 3 * H + 2 * V);
  return static_cast<uint64_t>(weights + kv + acts);
}

uint64_t device_budget(const Context& ctx) {
  if (ctx.options().device_memory_cap) return ctx.options().device_memory_cap;
  uint64_t most = 0;
  for (const MemoryHeapInfo& h : ctx.caps().heaps)
    if (h.device_local) most = std::max(most, h.size);
  return most;
}

nlohmann::json timing_json(const ForwardTiming& t, double ar_ms, double bytes, double flops) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const CommandTiming& k : t.by_kernel) kernels.push_back({{"kernel", k.label}, {"gpu_ms", k.ms}});
  return {{"queries", t.queries},
          {"kv_len", t.kv_len},
          {"ms", t.ms()},
          {"gpu_ms", t.gpu_ms},
          {"wall_ms", t.wall_ms},
          {"busy_ms", t.busy_ms},
          {"ratio_to_ar", ar_ms > 0 ? t.ms() / ar_ms : 0},
          {"gbps", bytes / (t.ms() * 1e6)},
          {"gflops", flops / (t.ms() * 1e6)},
          {"forward_dispatches", t.forward_dispatches},
          {"sampler_dispatches", t.sampler_dispatches},
          {"barriers", t.barriers},
          {"kernels", kernels}};
}

}  // namespace

frontend::OptionTable bench_synthetic_options() {
  return {{"--synthetic", "B|L|XL|tiny", "the LlamaGen shape to time (tiny: for tests)"},
          {"--grid", "16|24", "tokens per image side (LlamaGen's 256 and 384 px; default 16)"},
          {"--windows", "W1,W2,...", "verification windows to time (default 1,4,16,32,64)"},
          {"--repeat", "N", "timed runs per forward (default 5)"},
          {"--json", "FILE", "also write the timings and the projection as JSON"},
          {"--nfe", "FILE,...|none", "bench --json files whose NFE project images/s (default: three in docs/bench/)"},
          {"--seed", "S", "seed of the generated weights (default 0)"}};
}

int cmd_bench_synthetic(const Args& args) {
  frontend::ArgParser ap("bench", bench_synthetic_options());
  ap.parse(args);
  const std::string name = ap.get_or("--synthetic", "");
  const int64_t grid = ap.get_int("--grid", 16, 1, 256);
  if (grid != 16 && grid != 24)
    throw Error("bench: --grid must be 16 or 24 (LlamaGen's 256 and 384 px), got " + std::to_string(grid));
  const GptShape shape = shape_named(name, grid);
  const int64_t tokens = grid * grid, first = 1 + tokens / 2;  // the AR query sees half the image
  const std::vector<int64_t> windows = parse_windows(ap.get_or("--windows", "1,4,16,32,64"), tokens - tokens / 2);
  const int repeat = static_cast<int>(ap.get_int("--repeat", 5, 1, 1000));
  const uint64_t seed = static_cast<uint64_t>(ap.get_int("--seed", 0, 0, 1ll << 62));
  if (auto path = ap.get("--json")) check_output_path(*path, "--json");
  std::vector<std::string> nfe_files;
  if (auto f = ap.get("--nfe")) {
    std::stringstream ss(*f);
    for (std::string item; std::getline(ss, item, ',');)
      if (!item.empty() && item != "none") nfe_files.push_back(item);
  } else {
    for (const char* f : {"window_sweep12_lavapipe.json", "scdgs12_lavapipe.json", "lantern_k12_lavapipe.json"}) {
      const std::string path = std::string(VKSPEC_BENCH_DIR) + "/" + f;
      if (std::ifstream(path)) nfe_files.push_back(path);
    }
  }

  auto ctx = frontend::open_device();
  const std::string label = "synthetic LlamaGen-" + name + " " + std::to_string(grid) + "x" + std::to_string(grid);
  GptOptions opt;
  opt.max_queries = windows.back();
  const uint64_t need = device_bytes_needed(shape, opt.max_queries), budget = device_budget(*ctx);
  if (budget && need > budget)
    throw OutOfDeviceMemory(label + " needs about " + std::to_string(need >> 20) +
                            " MiB of device memory (f16 weights, KV cache, activations), more than the " +
                            std::to_string(budget >> 20) + " MiB " +
                            (ctx->options().device_memory_cap ? "VKSPEC_MAX_DEVICE_MEMORY allows"
                                                              : "of the largest device-local heap") +
                            " on " + ctx->caps().name);
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Gpt> gpt;
  double generate_s = 0;
  try {
    std::vector<uint8_t> bytes = synthetic_gpt(shape, llamagen_init_fill(seed)).take_bytes();
    generate_s = since(t0);
    t0 = std::chrono::steady_clock::now();
    gpt = std::make_unique<Gpt>(*ctx, SafetensorsFile(label, std::move(bytes)), opt);
  } catch (const std::bad_alloc&) {
    throw Error(label + ": out of host memory generating its weights (about " + std::to_string(need >> 20) + " MiB)");
  } catch (const OutOfDeviceMemory& e) {
    throw OutOfDeviceMemory(label + " does not fit on " + ctx->caps().name + ": " + e.what());
  }
  const double upload_s = since(t0);
  const GptConfig& cfg = gpt->config();
  GptBench bench(*ctx, *gpt);

  const double params = matrix_params(shape);
  auto bytes_read = [&](const ForwardTiming& t) {  // f16 matrices plus both CFG rows' keys and values
    return 2 * params + 2.0 * 2 * 2 * static_cast<double>(t.kv_len) * static_cast<double>(cfg.dim * cfg.n_layer);
  };
  auto flops = [&](const ForwardTiming& t) {
    const double rows = 2.0 * static_cast<double>(t.queries);
    return 2 * rows * params + 4 * rows * static_cast<double>(t.kv_len) * static_cast<double>(cfg.dim * cfg.n_layer);
  };
  std::fprintf(stderr, "bench: %s: generated in %.1f s, uploaded in %.1f s; timing ...\n", label.c_str(), generate_s,
               upload_s);
  const ForwardTiming ar = bench.time(first, 1, repeat);
  // AR steps 16 to a submit: the step without the host's round trip (ar --tokens-per-submit 16).
  constexpr int kPipelined = 16;
  const ForwardTiming ar_pipelined = bench.time(first, 1, repeat, kPipelined);
  std::vector<ForwardTiming> runs;
  for (int64_t w : windows) {
    runs.push_back(w == 1 ? ar : bench.time(first, w, repeat));
    std::fprintf(stderr, "bench: window %lld: %.2f ms\n", static_cast<long long>(w), runs.back().ms());
  }

  const bool gpu_clock = ar.gpu_ms > 0;
  std::printf("device: %s\nmodel: %s (dim %lld, %lld layers, %lld heads, FFN %lld, vocabulary %lld, %lld classes), "
              "f16 weights generated in memory (seed %llu)\n",
              ctx->caps().name.c_str(), label.c_str(), static_cast<long long>(cfg.dim),
              static_cast<long long>(cfg.n_layer), static_cast<long long>(cfg.n_head), static_cast<long long>(cfg.ffn_hidden),
              static_cast<long long>(cfg.vocab_size), static_cast<long long>(cfg.num_classes),
              static_cast<unsigned long long>(seed));
  std::printf("weights on the device %.1f MB, matrices streamed per forward %.1f MB; KV cache holds %lld of %lld "
              "tokens, 2 batch rows (CFG)\n",
              static_cast<double>(gpt->weight_bytes()) / 1e6, 2 * params / 1e6, static_cast<long long>(tokens / 2),
              static_cast<long long>(tokens));
  std::printf("ms: %s, median of %d; each forward is followed by the CFG sampler (vocabulary %lld), as in a decoding "
              "step\n\n",
              gpu_clock ? "GPU timestamps" : "wall clock (no timestamps on this device)", repeat,
              static_cast<long long>(cfg.vocab_size));
  std::printf("%-10s %7s %7s %10s %10s %10s %7s %8s %9s %11s %9s\n", "forward", "queries", "kv len", "ms", "wall ms",
              "busy ms", "ms/AR's", "GB/s", "GFLOP/s", "dispatches", "barriers");
  auto row = [&](const char* what, const ForwardTiming& t) {
    char disp[32];
    std::snprintf(disp, sizeof disp, "%u+%u", t.forward_dispatches, t.sampler_dispatches);
    std::printf("%-10s %7lld %7lld %10.2f %10.2f %10.2f %7.2f %8.2f %9.2f %11s %9u\n", what,
                static_cast<long long>(t.queries), static_cast<long long>(t.kv_len), t.ms(), t.wall_ms, t.busy_ms,
                t.ms() / ar.ms(), bytes_read(t) / (t.ms() * 1e6), flops(t) / (t.ms() * 1e6), disp, t.barriers);
  };
  row("AR step", ar);
  row("AR x16", ar_pipelined);
  for (const ForwardTiming& t : runs) row(("window " + std::to_string(t.queries)).c_str(), t);
  std::printf("(ms/AR's: this forward's ms over the AR step's, a cost per forward, not a speedup; dispatches: "
              "forward + sampler; GB/s: streamed matrices + KV read per forward / ms; AR x16: 16 AR steps per "
              "submit, times per step)\n");
  if (gpu_clock) {
    // The AR step and the widest window: where a verification forward's excess over a step goes.
    auto by_kernel = [](const char* what, const ForwardTiming& t) {
      std::printf("GPU time of %s by kernel:", what);
      for (size_t i = 0; i < t.by_kernel.size() && i < 6; ++i)
        std::printf(" %s %.2f ms (%.0f%%);", t.by_kernel[i].label.c_str(), t.by_kernel[i].ms,
                    100 * t.by_kernel[i].ms / t.gpu_ms);
      std::printf("\n");
    };
    std::printf("\n");
    by_kernel("the AR step", ar);
    if (!runs.empty() && runs.back().queries > 1)
      by_kernel(("window " + std::to_string(runs.back().queries)).c_str(), runs.back());
  }

  std::vector<ForwardCost> costs = {{1, ar.ms()}};
  for (const ForwardTiming& t : runs)
    if (t.queries > 1) costs.push_back({t.queries, t.ms()});
  std::vector<std::string> skipped;
  const std::vector<ProjectedMethod> projected = project_methods(nfe_files, tokens, costs, &skipped);
  if (!projected.empty()) {
    std::printf("\nPROJECTION, not a measurement: images/s = 1000 / (NFE x ms per forward), NFE per image from the "
                "shipped 16x16 model's runs%s, ms interpolated from the table above at the method's queries per "
                "forward; drafting and acceptance kernels not counted\n",
                tokens == 256 ? "" : " scaled to this grid's tokens");
    std::printf("%-10s %-22s %7s %8s %8s %10s %9s %10s %8s\n", "method", "options", "images", "NFE", "queries",
                "ms/fwd", "s/image", "images/s", "proj. vs ar");
    double ar_rate = 0;
    for (const auto& p : projected)
      if (p.method == reference_method_name()) ar_rate = p.images_per_s;
    for (const auto& p : projected)
      std::printf("%-10s %-22s %7lld %8.1f %8lld %10.2f %9.3f %10.4g %8.2f\n", p.method.c_str(), p.options.c_str(),
                  static_cast<long long>(p.images), p.nfe, static_cast<long long>(p.queries), p.ms_per_forward,
                  1.0 / p.images_per_s, p.images_per_s, ar_rate > 0 ? p.images_per_s / ar_rate : 0);
    if (!skipped.empty()) {
      std::printf("not projected (no fixed queries per forward, a drafter model, or beyond the windows measured):");
      for (const auto& s : skipped) std::printf(" %s;", s.c_str());
      std::printf("\n");
    }
  }

  if (auto path = ap.get("--json")) {
    nlohmann::json j = run_info(*ctx);
    j["bench"] = "synthetic";
    j["impl"] = "vkspec";
    j["shape"] = name;
    j["grid"] = grid;
    j["model"] = {{"dim", cfg.dim},         {"n_layer", cfg.n_layer},   {"n_head", cfg.n_head},
                  {"ffn_hidden", cfg.ffn_hidden}, {"vocab_size", cfg.vocab_size}, {"num_classes", cfg.num_classes},
                  {"weights", "f16"},       {"seed", seed}};
    j["weight_bytes"] = gpt->weight_bytes();
    j["matrix_bytes_per_forward"] = 2 * params;
    j["kv_tokens"] = tokens / 2;
    j["batch_rows"] = 2;
    j["repeat"] = repeat;
    j["clock"] = gpu_clock ? "gpu_timestamps" : "wall";
    j["generate_s"] = generate_s;
    j["upload_s"] = upload_s;
    j["ar_step"] = timing_json(ar, ar.ms(), bytes_read(ar), flops(ar));
    j["ar_step_16_per_submit"] = timing_json(ar_pipelined, ar.ms(), bytes_read(ar_pipelined), flops(ar_pipelined));
    j["windows"] = nlohmann::json::array();
    for (const ForwardTiming& t : runs) {
      nlohmann::json w = timing_json(t, ar.ms(), bytes_read(t), flops(t));
      w["window"] = t.queries;
      j["windows"].push_back(w);
    }
    nlohmann::json p = {{"note", "projection, not a measurement: NFE per image from the shipped model's bench runs "
                                 "(scaled to this grid) x the forward times measured here"},
                        {"sources", nfe_files},
                        {"methods", nlohmann::json::array()},
                        {"not_projected", skipped}};
    for (const auto& m : projected)
      p["methods"].push_back({{"method", m.method},
                              {"options", m.options},
                              {"source", m.source},
                              {"images", m.images},
                              {"nfe", m.nfe},
                              {"queries_per_forward", m.queries},
                              {"ms_per_forward", m.ms_per_forward},
                              {"images_per_s", m.images_per_s}});
    j["projection"] = p;
    write_json_file(*path, j, "bench");
  }
  return 0;
}

}  // namespace vkspec::cli
