// vkspec bench: every requested method on the same classes and seeds in one process; one table
// (and JSON) of forwards, accepted length, latency, speedup against ar, class accuracy, FID against
// the Fashion-MNIST test set and against ar's own samples (eval/).
// Method options (--window, --init, ...) go to the methods that know them; --sweep KEY=V1,V2,...
// repeats each method that knows KEY once per value.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/arg_parser.h"
#include "cli/commands.h"
#include "cli/method_options.h"
#include "cli/model_loading.h"
#include "cli/model_paths.h"
#include "cli/output_path.h"
#include "decoding/generation.h"
#include "engine/checks/op_bench.h"
#include "engine/vk/memory_report.h"
#include "eval/fashion_mnist.h"
#include "eval/frechet.h"
#include "eval/image_judge.h"
#include "eval/reference_stats.h"

namespace vkspec::cli {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

using Run = MethodRun;

struct RunResult {
  Run run;
  int64_t images = 0;
  double nfe_mean = 0, draft_forwards_mean = 0, accepted_length_mean = 0, latency_median = 0, latency_p90 = 0;
  double tokens_per_s = 0, speedup = 0, islands_mean = 0;
  WorkCounters work;  // recorded by the decoding of all timed images (not by the quality judge)
  // Process CPU time of the timed images (on a CPU device mostly the device's own work, which a
  // busy machine inflates far less than wall time) and, with --profile, their GPU timestamps.
  double busy_ms = 0, device_ms = 0;
  MemoryReport memory;  // after the run
  double class_accuracy = -1, fid = -1, fid_vs_ar = -1;  // -1: not measured
  Verdict verdict;                                        // features of the run's images
};

nlohmann::json measured(double v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string cell(double v, const char* fmt) {
  if (v < 0) return "-";
  char b[32];
  std::snprintf(b, sizeof(b), fmt, v);
  return b;
}

// The runs: each method once with the options it knows, or once per value of a swept option.
std::vector<Run> plan_runs(const std::vector<std::string>& methods, const MethodOptions& given,
                           const std::string& sweep) {
  std::string key;
  std::vector<std::string> values;
  if (!sweep.empty()) {
    const size_t eq = sweep.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("bench: --sweep expects KEY=V1,V2,..., got '" + sweep + "'");
    key = sweep.substr(0, eq);
    values = split(sweep.substr(eq + 1), ',');
    if (values.empty()) throw Error("bench: --sweep " + key + " has no values");
    if (given.count(key)) throw Error("bench: --" + key + " is both given and swept");
    bool used = false;
    for (const std::string& m : methods) used = used || !options_for(m, {{key, values[0]}}).empty();
    if (!used) throw Error("bench: none of the methods has an option --" + key + " to sweep");
  }
  std::vector<Run> runs;
  for (const std::string& m : methods) {
    const MethodOptions base = options_for(m, given);
    if (key.empty() || options_for(m, {{key, values[0]}}).empty()) {
      runs.push_back({m, base});
      continue;
    }
    for (const std::string& v : values) {
      MethodOptions o = base;
      o[key] = v;
      runs.push_back({m, o});
    }
  }
  return runs;
}

}  // namespace

int cmd_bench(const Args& args) {
  // --synthetic times the forwards of a generated model instead of generating images.
  for (const std::string& a : args)
    if (a == "--synthetic" || a.rfind("--synthetic=", 0) == 0) return cmd_bench_synthetic(args);
  std::set<std::string> known = {"--methods", "--images", "--json",   "--classifier",
                                 "--seed",    "--sweep",  "--warmup", "--dataset"};
  for (const std::string& f : model_flags()) known.insert(f);
  for (const std::string& f : method_option_flags()) known.insert(f);
  ArgParser ap("bench", {"--profile"}, known);
  ap.parse(args);
  const std::vector<std::string> methods = split(ap.get_or("--methods", "ar"), ',');
  if (methods.empty()) throw Error("bench: --methods is empty");
  if (auto path = ap.get("--json")) check_output_path(*path, "--json");
  const std::vector<std::string> names = strategy_names();
  for (const std::string& m : methods)
    if (std::find(names.begin(), names.end(), m) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw Error("bench: unknown method '" + m + "' (known: " + list + ")");
    }
  const int64_t images = ap.get_int("--images", 10, 1, 100000);
  const int64_t warmup = ap.get_int("--warmup", 1, 0, 100);
  const uint64_t seed = static_cast<uint64_t>(ap.get_int("--seed", 0, 0, (1ll << 62)));
  // GPU timestamps around every command of every step (a little overhead of their own).
  const bool profile = ap.flag("--profile");
  const MethodOptions given = given_method_options(ap);
  check_used(given, methods);
  const std::vector<Run> runs = plan_runs(methods, given, ap.get_or("--sweep", ""));

  auto ctx = Context::create_default();
  // --classifier none: no class accuracy (and no tokenizer needed), e.g. for untrained models.
  const std::string cls_path = ap.get_or("--classifier", "");
  const LoadedModels loaded = load_models(*ctx, ap, runs, cls_path != "none", ImageJudge::kBatch);
  const Gpt& gpt = *loaded.target;
  const GptConfig& cfg = gpt.config();
  const SamplerSettings ss = sampler_settings(ap, cfg);
  std::unique_ptr<ImageJudge> judge;
  GaussianStats reference;
  if (cls_path != "none") {
    judge = std::make_unique<ImageJudge>(
        *ctx, *loaded.vq, cfg.grid_size,
        cls_path.empty() ? shipped_model("fmnist_classifier.safetensors", "--classifier") : cls_path);
    // --dataset none: class accuracy and drift from ar only.
    const std::string dataset = ap.get_or("--dataset", fashion_mnist_dir());
    if (dataset != "none") reference = fashion_mnist_test_stats(*ctx, judge->classifier_path(), dataset);
  }
  const ModelSet models = loaded.set(*ctx);
  const bool tty = isatty(STDERR_FILENO);
  std::vector<RunResult> results;
  for (const Run& run : runs) {
    const std::string label = run.method + (run.options.empty() ? "" : " " + options_str(run.options));
    auto inputs = [&](int64_t i) {
      StrategyInputs in;
      in.class_id = i % cfg.num_classes;
      in.seed = seed + static_cast<uint64_t>(i);
      in.sampler = ss;
      in.options = run.options;
      in.profile = profile;
      return in;
    };
    // Untimed images first: pipelines are compiled on first use.
    for (int64_t i = 0; i < warmup; ++i) generate_one(run.method, models, inputs(images + i), false);
    RunResult r;
    r.run = run;
    r.images = images;
    std::vector<double> lat;
    double nfe = 0, drafts = 0, acc_len = 0, tokens = 0, ms = 0, islands = 0;
    for (int64_t i = 0; i < images; ++i) {
      const WorkCounters w0 = ctx->counters();
      const double c0 = process_cpu_seconds();
      Generation g = generate_one(run.method, models, inputs(i), false);
      r.busy_ms += (process_cpu_seconds() - c0) * 1e3;
      r.work += ctx->counters() - w0;
      r.device_ms += g.device_ms;
      lat.push_back(g.wall_ms);
      nfe += static_cast<double>(g.nfe);
      drafts += static_cast<double>(g.draft_forwards);
      acc_len += g.accepted_length();
      tokens += static_cast<double>(g.tokens.size());
      ms += g.wall_ms;
      islands += static_cast<double>(g.islands);
      if (judge) judge->add(g.tokens, g.class_id);
      if (tty)
        std::fprintf(stderr, "\rbench %s: image %lld/%lld   ", label.c_str(), static_cast<long long>(i + 1),
                     static_cast<long long>(images));
    }
    const double n = static_cast<double>(images);
    r.nfe_mean = nfe / n;
    r.draft_forwards_mean = drafts / n;
    r.accepted_length_mean = acc_len / n;
    r.latency_median = percentile(lat, 0.5);
    r.latency_p90 = percentile(lat, 0.9);
    r.tokens_per_s = ms > 0 ? tokens / (ms / 1000.0) : 0;
    r.islands_mean = islands / n;
    if (judge) {
      r.verdict = judge->take();
      r.class_accuracy = r.verdict.accuracy;
    }
    r.memory = memory_report(*ctx);
    // The table comes at the end; a line per finished run shows progress in logs of long runs.
    std::fprintf(stderr, "%sbench: %s: %lld images, NFE %.1f, median %.0f ms per image, %s\n", tty ? "\r" : "",
                 label.c_str(), static_cast<long long>(images), r.nfe_mean, r.latency_median, r.memory.str().c_str());
    results.push_back(r);
  }
  if (tty) std::fprintf(stderr, "\n");
  const RunResult* ar = nullptr;
  for (const auto& r : results)
    if (r.run.method == "ar") ar = &r;
  for (auto& r : results) r.speedup = ar && r.latency_median > 0 ? ar->latency_median / r.latency_median : 0;
  // FID needs two images at least; docs quote it from 1000 or more.
  if (judge && images >= 2) {
    std::unique_ptr<GaussianStats> ar_stats;
    if (ar) ar_stats = std::make_unique<GaussianStats>(gaussian_stats(ar->verdict.features, images, ar->verdict.feature_dim));
    for (auto& r : results) {
      const GaussianStats st = gaussian_stats(r.verdict.features, images, r.verdict.feature_dim);
      if (reference.dim) r.fid = frechet_distance(st, reference);
      if (ar_stats) r.fid_vs_ar = frechet_distance(st, *ar_stats);
    }
  }

  std::printf("device: %s\nmodel: %s (%lld tokens per image), %s, %lld images per method\n\n", ctx->caps().name.c_str(),
              gpt.path().c_str(), static_cast<long long>(cfg.image_tokens()), ss.str().c_str(),
              static_cast<long long>(images));
  const bool with_islands = std::any_of(results.begin(), results.end(), [](const RunResult& r) { return r.islands_mean > 0; });
  std::printf("%-10s %-24s %7s %7s %8s %11s %9s %8s %9s %9s %7s %7s%s\n", "method", "options", "NFE", "drafts",
              "acc.len", "latency ms", "p90 ms", "speedup", "tokens/s", "class acc", "FID", "FID/ar",
              with_islands ? "  islands" : "");
  for (const auto& r : results) {
    std::printf("%-10s %-24s %7.1f %7.1f %8.2f %11.1f %9.1f %7.2fx %9.1f %9s %7s %7s", r.run.method.c_str(),
                options_str(r.run.options).c_str(), r.nfe_mean, r.draft_forwards_mean, r.accepted_length_mean,
                r.latency_median, r.latency_p90, r.speedup, r.tokens_per_s,
                r.class_accuracy >= 0 ? (cell(100.0 * r.class_accuracy, "%.1f") + "%").c_str() : "-",
                cell(r.fid, "%.2f").c_str(), cell(r.fid_vs_ar, "%.2f").c_str());
    if (with_islands) std::printf(" %8.1f", r.islands_mean);
    std::printf("\n");
  }
  // Long runs (the soak in docs/reliability.md) read these to see that nothing grows.
  std::printf("\nmemory after each run (RSS / device in use, MiB):");
  for (const auto& r : results) std::printf(" %s %.1f/%.1f;", r.run.method.c_str(), r.memory.rss_mib, r.memory.device_in_use_mib);
  std::printf("\n");
  // Per-dispatch overhead is paid per token: the count to bring down next to milliseconds.
  std::printf("dispatches per image / per target forward (all models' forwards, sampling, acceptance):");
  for (const auto& r : results) {
    const double n = static_cast<double>(r.images);
    std::printf(" %s %.0f / %.1f;", r.run.method.c_str(), static_cast<double>(r.work.dispatches) / n,
                static_cast<double>(r.work.dispatches) / (n * r.nfe_mean));
  }
  std::printf("\n");
  std::printf("per target forward: transfers, submits, busy CPU ms%s:", profile ? ", GPU ms" : "");
  for (const auto& r : results) {
    const double f = static_cast<double>(r.images) * r.nfe_mean;
    std::printf(" %s %.1f, %.1f, %.1f", r.run.method.c_str(), static_cast<double>(r.work.transfers) / f,
                static_cast<double>(r.work.submits) / f, r.busy_ms / f);
    if (profile) std::printf(", %.1f", r.device_ms / f);
    std::printf(";");
  }
  std::printf("\n");
  if (judge && images < 1000)
    std::printf("\nFID from %lld images per method (quote FID from 1000 or more)\n", static_cast<long long>(images));
  if (auto path = ap.get("--json")) {
    nlohmann::json j;
    j["device"] = ctx->caps().name;
    j["model"] = gpt.path();
    j["image_tokens"] = cfg.image_tokens();
    if (loaded.drafter) j["drafter"] = loaded.drafter->path();
    j["sampler"] = {{"cfg", ss.cfg}, {"temperature", ss.temperature}, {"top_k", ss.top_k}, {"top_p", ss.top_p}};
    j["results"] = nlohmann::json::array();
    for (const auto& r : results) {
      const double n = static_cast<double>(r.images);
      j["results"].push_back({{"method", r.run.method},
                              {"options", r.run.options},
                              {"images", r.images},
                              {"nfe_mean", r.nfe_mean},
                              {"draft_forwards_mean", r.draft_forwards_mean},
                              {"accepted_length_mean", r.accepted_length_mean},
                              {"latency_ms_median", r.latency_median},
                              {"latency_ms_p90", r.latency_p90},
                              {"speedup", r.speedup},
                              {"tokens_per_s", r.tokens_per_s},
                              {"class_accuracy", measured(r.class_accuracy)},
                              {"fid", measured(r.fid)},
                              {"fid_vs_ar", measured(r.fid_vs_ar)},
                              {"islands_mean", r.islands_mean},
                              {"dispatches_per_image", static_cast<double>(r.work.dispatches) / n},
                              {"dispatches_per_forward", static_cast<double>(r.work.dispatches) / (n * r.nfe_mean)},
                              {"transfers_per_image", static_cast<double>(r.work.transfers) / n},
                              {"submits_per_image", static_cast<double>(r.work.submits) / n},
                              {"barriers_per_image", static_cast<double>(r.work.barriers) / n},
                              {"busy_cpu_ms_per_image", r.busy_ms / n},
                              {"device_ms_per_image", profile ? nlohmann::json(r.device_ms / n) : nlohmann::json(nullptr)},
                              {"rss_mib_after", r.memory.rss_mib},
                              {"device_mib_after", r.memory.device_in_use_mib}});
    }
    write_json_file(*path, j, "bench");
  }
  return 0;
}

}  // namespace vkspec::cli
