// vkspec bench --synthetic SHAPE: a model family's released shapes (LlamaGen B|L|XL, Janus-Pro 1B
// and 7B; engine/model/model_family.h) with generated f16 weights (built in
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
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/nfe_projection.h"
#include "cli/output_path.h"
#include "cli/run_info.h"
#include "common/error.h"
#include "decoding/strategy_registry.h"
#include "engine/checks/gpt_bench.h"
#include "engine/model/model_family.h"
#include "frontend/arg_parser.h"
#include "frontend/device_choice.h"

namespace vkspec::cli {
namespace {

// Seconds since t0.
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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

// Device bytes a model of `cfg` needs beyond what its file holds, to refuse early (before the
// upload of gigabytes) what cannot fit: f16 weights (about the file's size), two CFG rows of f16
// keys and values, the activations of max_queries queries.
uint64_t device_bytes_needed(const GptConfig& cfg, uint64_t file_bytes, int64_t max_queries) {
  const double D = static_cast<double>(cfg.dim), H = static_cast<double>(cfg.ffn_hidden);
  const double V = static_cast<double>(cfg.vocab_size), slots = static_cast<double>(cfg.seq_len());
  const double kv = 2.0 * 2 * 2 * slots * D * static_cast<double>(cfg.n_layer);
  const double acts = 4.0 * 2 * static_cast<double>(max_queries) * (8 * D + 3 * H + 2 * V);
  return static_cast<uint64_t>(static_cast<double>(file_bytes) + kv + acts);
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

// What the command line asks for, checked before any device is opened.
struct SyntheticRequest {
  std::string name;  // a family's synthetic shape: B, L, XL, tiny, janus-pro-1b, ...
  const ModelFamilyDescriptor* family = nullptr;
  int64_t grid = 0;               // 0: the shape's own
  int64_t tokens = 0, first = 0;  // tokens per image; the sequence position the AR query sits at
  std::vector<int64_t> windows;
  int repeat = 5;
  uint64_t seed = 0;
  std::vector<std::string> nfe_files;
  std::optional<std::string> json_path;
};

// The --nfe files, or the shipped bench runs in docs/bench/ that exist.
std::vector<std::string> nfe_files_from(const std::optional<std::string>& option) {
  std::vector<std::string> files;
  if (option) {
    std::stringstream ss(*option);
    for (std::string item; std::getline(ss, item, ',');)
      if (!item.empty() && item != "none") files.push_back(item);
    return files;
  }
  for (const char* f : {"window_sweep12_lavapipe.json", "scdgs12_lavapipe.json", "lantern_k12_lavapipe.json"}) {
    const std::string path = std::string(VKSPEC_BENCH_DIR) + "/" + f;
    if (std::ifstream(path)) files.push_back(path);
  }
  return files;
}

SyntheticRequest parse_request(const Args& args) {
  frontend::ArgParser ap("bench", bench_synthetic_options());
  ap.parse(args);
  SyntheticRequest r;
  r.name = ap.get_or("--synthetic", "");
  r.family = family_with_synthetic_shape(r.name);
  if (!r.family) {
    std::string known;
    for (const ModelFamilyDescriptor* d : model_families())
      for (const std::string& n : d->synthetic_shapes) known += (known.empty() ? "" : ", ") + n;
    throw Error("bench: --synthetic " + r.name + " is no shape a model family offers (known: " + known + ")");
  }
  r.grid = ap.get_int("--grid", 0, 0, 256);
  if (r.grid != 0 && r.grid != 16 && r.grid != 24)
    throw Error("bench: --grid must be 16 or 24 (256 and 384 px with a 16x VQ), got " + std::to_string(r.grid));
  // The windows' bound needs the grid before the model exists: the shape's own is read from the
  // family when the model is made (load_synthetic_model); 24 bounds both.
  r.tokens = (r.grid ? r.grid : 24) * (r.grid ? r.grid : 24);
  r.windows = parse_windows(ap.get_or("--windows", "1,4,16,32,64"), r.tokens - r.tokens / 2);
  r.repeat = static_cast<int>(ap.get_int("--repeat", 5, 1, 1000));
  r.seed = static_cast<uint64_t>(ap.get_int("--seed", 0, 0, 1ll << 62));
  r.json_path = ap.get("--json");
  if (r.json_path) check_output_path(*r.json_path, "--json");
  r.nfe_files = nfe_files_from(ap.get("--nfe"));
  return r;
}

// The generated model on the device, and how long making and uploading it took.
struct SyntheticModel {
  std::string label;
  std::unique_ptr<Gpt> gpt;
  double generate_s = 0, upload_s = 0;
};

// Refuses a shape that cannot fit before generating its weights, then generates and uploads them.
SyntheticModel load_synthetic_model(Context& ctx, SyntheticRequest& r) {
  SyntheticModel m;
  m.label = "synthetic " + r.family->name + " " + r.name;
  GptOptions opt;
  opt.max_queries = r.windows.back();
  auto t0 = std::chrono::steady_clock::now();
  try {
    std::vector<uint8_t> bytes = r.family->synthetic(r.name, r.grid, r.seed).take_bytes();
    const uint64_t file_bytes = bytes.size();
    m.generate_s = since(t0);
    SafetensorsFile file(m.label, std::move(bytes));
    const GptConfig cfg = r.family->config(file);
    const uint64_t need = device_bytes_needed(cfg, file_bytes, opt.max_queries), budget = device_budget(ctx);
    if (budget && need > budget)
      throw OutOfDeviceMemory(m.label + " needs about " + std::to_string(need >> 20) +
                              " MiB of device memory (f16 weights, KV cache, activations), more than the " +
                              std::to_string(budget >> 20) + " MiB " +
                              (ctx.options().device_memory_cap ? "VKSPEC_MAX_DEVICE_MEMORY allows"
                                                               : "of the largest device-local heap") +
                              " on " + ctx.caps().name);
    r.grid = cfg.grid_size;
    r.tokens = cfg.image_tokens();
    if (r.windows.back() > r.tokens - r.tokens / 2)
      throw Error("bench: --windows " + std::to_string(r.windows.back()) + " must be in [1, " +
                  std::to_string(r.tokens - r.tokens / 2) +
                  "]: the window starts in the middle of the image and must end inside it");
    r.first = cfg.cls_token_num + r.tokens / 2;  // the AR query sees half the image
    m.label += " " + std::to_string(r.grid) + "x" + std::to_string(r.grid);
    t0 = std::chrono::steady_clock::now();
    m.gpt = std::make_unique<Gpt>(ctx, std::move(file), opt);
  } catch (const std::bad_alloc&) {
    throw Error(m.label + ": out of host memory generating its weights");
  } catch (const OutOfDeviceMemory& e) {
    throw OutOfDeviceMemory(m.label + " does not fit on " + ctx.caps().name + ": " + e.what());
  }
  m.upload_s = since(t0);
  return m;
}

// The forwards timed: one AR step, the same 16 to a submit, and one per window.
struct SyntheticTimings {
  ForwardTiming ar, ar_pipelined;
  std::vector<ForwardTiming> runs;  // one per window, the AR step's for window 1
};

SyntheticTimings time_forwards(GptBench& bench, const SyntheticRequest& r) {
  SyntheticTimings t;
  t.ar = bench.time(r.first, 1, r.repeat);
  // AR steps 16 to a submit: the step without the host's round trip (ar --tokens-per-submit 16).
  constexpr int kPipelined = 16;
  t.ar_pipelined = bench.time(r.first, 1, r.repeat, kPipelined);
  for (int64_t w : r.windows) {
    t.runs.push_back(w == 1 ? t.ar : bench.time(r.first, w, r.repeat));
    std::fprintf(stderr, "bench: window %lld: %.2f ms\n", static_cast<long long>(w), t.runs.back().ms());
  }
  return t;
}

// Bytes read and floating-point operations of a forward of the model.
struct ForwardWork {
  double params = 0;                            // Gpt::matrix_params
  double kv_width = 0;                          // dim x layers: the values one cached token holds per K or V
  double bytes(const ForwardTiming& t) const {  // f16 matrices plus both CFG rows' keys and values
    return 2 * params + 2.0 * 2 * 2 * static_cast<double>(t.kv_len) * kv_width;
  }
  double flops(const ForwardTiming& t) const {
    const double rows = 2.0 * static_cast<double>(t.queries);
    return 2 * rows * params + 4 * rows * static_cast<double>(t.kv_len) * kv_width;
  }
};

void print_model_header(const Context& ctx, const SyntheticRequest& r, const SyntheticModel& m, const ForwardWork& work,
                        bool gpu_clock) {
  const GptConfig& cfg = m.gpt->config();
  std::printf("device: %s\nmodel: %s (dim %lld, %lld layers, %lld heads, FFN %lld, vocabulary %lld, %lld classes), "
              "f16 weights generated in memory (seed %llu)\n",
              ctx.caps().name.c_str(), m.label.c_str(), static_cast<long long>(cfg.dim),
              static_cast<long long>(cfg.n_layer), static_cast<long long>(cfg.n_head),
              static_cast<long long>(cfg.ffn_hidden), static_cast<long long>(cfg.vocab_size),
              static_cast<long long>(cfg.num_classes), static_cast<unsigned long long>(r.seed));
  std::printf("weights on the device %.1f MB, matrices streamed per forward %.1f MB; KV cache holds %lld of %lld "
              "tokens, 2 batch rows (CFG)\n",
              static_cast<double>(m.gpt->weight_bytes()) / 1e6, 2 * work.params / 1e6,
              static_cast<long long>(r.tokens / 2), static_cast<long long>(r.tokens));
  std::printf("ms: %s, median of %d; each forward is followed by the CFG sampler (vocabulary %lld), as in a decoding "
              "step\n\n",
              gpu_clock ? "GPU timestamps" : "wall clock (no timestamps on this device)", r.repeat,
              static_cast<long long>(cfg.vocab_size));
}

void print_timing_table(const SyntheticTimings& t, const ForwardWork& work) {
  std::printf("%-10s %7s %7s %10s %10s %10s %7s %8s %9s %11s %9s\n", "forward", "queries", "kv len", "ms", "wall ms",
              "busy ms", "ms/AR's", "GB/s", "GFLOP/s", "dispatches", "barriers");
  auto row = [&](const char* what, const ForwardTiming& f) {
    char disp[32];
    std::snprintf(disp, sizeof disp, "%u+%u", f.forward_dispatches, f.sampler_dispatches);
    std::printf("%-10s %7lld %7lld %10.2f %10.2f %10.2f %7.2f %8.2f %9.2f %11s %9u\n", what,
                static_cast<long long>(f.queries), static_cast<long long>(f.kv_len), f.ms(), f.wall_ms, f.busy_ms,
                f.ms() / t.ar.ms(), work.bytes(f) / (f.ms() * 1e6), work.flops(f) / (f.ms() * 1e6), disp, f.barriers);
  };
  row("AR step", t.ar);
  row("AR x16", t.ar_pipelined);
  for (const ForwardTiming& f : t.runs) row(("window " + std::to_string(f.queries)).c_str(), f);
  std::printf("(ms/AR's: this forward's ms over the AR step's, a cost per forward, not a speedup; dispatches: "
              "forward + sampler; GB/s: streamed matrices + KV read per forward / ms; AR x16: 16 AR steps per "
              "submit, times per step)\n");
}

// The AR step and the widest window: where a verification forward's excess over a step goes.
void print_kernel_breakdown(const SyntheticTimings& t) {
  auto by_kernel = [](const char* what, const ForwardTiming& f) {
    std::printf("GPU time of %s by kernel:", what);
    for (size_t i = 0; i < f.by_kernel.size() && i < 6; ++i)
      std::printf(" %s %.2f ms (%.0f%%);", f.by_kernel[i].label.c_str(), f.by_kernel[i].ms,
                  100 * f.by_kernel[i].ms / f.gpu_ms);
    std::printf("\n");
  };
  std::printf("\n");
  by_kernel("the AR step", t.ar);
  if (!t.runs.empty() && t.runs.back().queries > 1)
    by_kernel(("window " + std::to_string(t.runs.back().queries)).c_str(), t.runs.back());
}

// Images/s per method from the NFE files and the forward costs measured here.
struct Projection {
  std::vector<ProjectedMethod> methods;
  std::vector<std::string> skipped;
};

Projection project(const SyntheticRequest& r, const SyntheticTimings& t) {
  std::vector<ForwardCost> costs = {{1, t.ar.ms()}};
  for (const ForwardTiming& f : t.runs)
    if (f.queries > 1) costs.push_back({f.queries, f.ms()});
  Projection p;
  p.methods = project_methods(r.nfe_files, r.tokens, costs, &p.skipped);
  return p;
}

void print_projection(const Projection& p, int64_t tokens) {
  if (p.methods.empty()) return;
  std::printf("\nPROJECTION, not a measurement: images/s = 1000 / (NFE x ms per forward), NFE per image from the "
              "shipped 16x16 model's runs%s, ms interpolated from the table above at the method's queries per "
              "forward; drafting and acceptance kernels not counted\n",
              tokens == 256 ? "" : " scaled to this grid's tokens");
  std::printf("%-10s %-22s %7s %8s %8s %10s %9s %10s %8s\n", "method", "options", "images", "NFE", "queries", "ms/fwd",
              "s/image", "images/s", "proj. vs ar");
  double ar_rate = 0;
  for (const auto& m : p.methods)
    if (m.method == reference_method_name()) ar_rate = m.images_per_s;
  for (const auto& m : p.methods)
    std::printf("%-10s %-22s %7lld %8.1f %8lld %10.2f %9.3f %10.4g %8.2f\n", m.method.c_str(), m.options.c_str(),
                static_cast<long long>(m.images), m.nfe, static_cast<long long>(m.queries), m.ms_per_forward,
                1.0 / m.images_per_s, m.images_per_s, ar_rate > 0 ? m.images_per_s / ar_rate : 0);
  if (!p.skipped.empty()) {
    std::printf("not projected (no fixed queries per forward, a drafter model, or beyond the windows measured):");
    for (const auto& s : p.skipped) std::printf(" %s;", s.c_str());
    std::printf("\n");
  }
}

nlohmann::json projection_json(const Projection& p, const std::vector<std::string>& sources) {
  nlohmann::json j = {{"note", "projection, not a measurement: NFE per image from the shipped model's bench runs "
                               "(scaled to this grid) x the forward times measured here"},
                      {"sources", sources},
                      {"methods", nlohmann::json::array()},
                      {"not_projected", p.skipped}};
  for (const auto& m : p.methods)
    j["methods"].push_back({{"method", m.method},
                            {"options", m.options},
                            {"source", m.source},
                            {"images", m.images},
                            {"nfe", m.nfe},
                            {"queries_per_forward", m.queries},
                            {"ms_per_forward", m.ms_per_forward},
                            {"images_per_s", m.images_per_s}});
  return j;
}

void write_synthetic_json(const Context& ctx, const SyntheticRequest& r, const SyntheticModel& m,
                          const SyntheticTimings& t, const ForwardWork& work, const Projection& p) {
  const GptConfig& cfg = m.gpt->config();
  nlohmann::json j = run_info(ctx);
  j["bench"] = "synthetic";
  j["impl"] = "vkspec";
  j["shape"] = r.name;
  j["grid"] = r.grid;
  j["model"] = {{"dim", cfg.dim},
                {"n_layer", cfg.n_layer},
                {"n_head", cfg.n_head},
                {"ffn_hidden", cfg.ffn_hidden},
                {"vocab_size", cfg.vocab_size},
                {"num_classes", cfg.num_classes},
                {"weights", "f16"},
                {"seed", r.seed}};
  j["weight_bytes"] = m.gpt->weight_bytes();
  j["matrix_bytes_per_forward"] = 2 * work.params;
  j["kv_tokens"] = r.tokens / 2;
  j["batch_rows"] = 2;
  j["repeat"] = r.repeat;
  j["clock"] = t.ar.gpu_ms > 0 ? "gpu_timestamps" : "wall";
  j["generate_s"] = m.generate_s;
  j["upload_s"] = m.upload_s;
  j["ar_step"] = timing_json(t.ar, t.ar.ms(), work.bytes(t.ar), work.flops(t.ar));
  j["ar_step_16_per_submit"] =
      timing_json(t.ar_pipelined, t.ar.ms(), work.bytes(t.ar_pipelined), work.flops(t.ar_pipelined));
  j["windows"] = nlohmann::json::array();
  for (const ForwardTiming& f : t.runs) {
    nlohmann::json w = timing_json(f, t.ar.ms(), work.bytes(f), work.flops(f));
    w["window"] = f.queries;
    j["windows"].push_back(w);
  }
  j["projection"] = projection_json(p, r.nfe_files);
  write_json_file(*r.json_path, j, "bench");
}

}  // namespace

frontend::OptionTable bench_synthetic_options() {
  return {{"--synthetic", "SHAPE",
           "the shape to time: LlamaGen's B|L|XL, janus-pro-1b|janus-pro-7b (tiny, janus-tiny: for tests)"},
          {"--grid", "16|24", "tokens per image side (LlamaGen's 256 and 384 px; default 16)"},
          {"--windows", "W1,W2,...", "verification windows to time (default 1,4,16,32,64)"},
          {"--repeat", "N", "timed runs per forward (default 5)"},
          {"--json", "FILE", "also write the timings and the projection as JSON"},
          {"--nfe", "FILE,...|none", "bench --json files whose NFE project images/s (default: three in docs/bench/)"},
          {"--seed", "S", "seed of the generated weights (default 0)"}};
}

int cmd_bench_synthetic(const Args& args) {
  SyntheticRequest r = parse_request(args);
  auto ctx = frontend::open_device();
  const SyntheticModel m = load_synthetic_model(*ctx, r);
  const GptConfig& cfg = m.gpt->config();
  GptBench bench(*ctx, *m.gpt);
  const ForwardWork work{static_cast<double>(m.gpt->matrix_params()), static_cast<double>(cfg.dim * cfg.n_layer)};
  std::fprintf(stderr, "bench: %s: generated in %.1f s, uploaded in %.1f s; timing ...\n", m.label.c_str(),
               m.generate_s, m.upload_s);
  const SyntheticTimings t = time_forwards(bench, r);

  const bool gpu_clock = t.ar.gpu_ms > 0;
  print_model_header(*ctx, r, m, work, gpu_clock);
  print_timing_table(t, work);
  if (gpu_clock) print_kernel_breakdown(t);
  const Projection p = project(r, t);
  print_projection(p, r.tokens);
  if (r.json_path) write_synthetic_json(*ctx, r, m, t, work, p);
  return 0;
}

}  // namespace vkspec::cli
