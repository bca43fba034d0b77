// vkspec bench: every requested method on the same classes and seeds in one process; one table
// (and JSON) of forwards, accepted length, latency, speedup against ar, class accuracy, FID against
// the Fashion-MNIST test set and against ar's own samples (eval/); a second table of quality with
// intervals: KID, FID-infinity, class accuracy's bootstrap interval, differences against ar paired
// on equal seeds, and with --precision-recall precision and recall (cli/quality_table.h).
// Method options (--window, --init, ...) go to the methods that know them; --sweep KEY=V1,V2,...
// repeats each method that knows KEY once per value.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/device_pool.h"
#include "cli/iteration_table.h"
#include "cli/kernel_table.h"
#include "cli/method_options.h"
#include "cli/output_path.h"
#include "cli/progress.h"
#include "cli/quality_table.h"
#include "cli/run_info.h"
#include "cli/sample_outputs.h"
#include "cli/sharded_images.h"
#include "cli/token_images.h"
#include "decoding/generation.h"
#include "decoding/iteration_stats.h"
#include "engine/checks/op_bench.h"
#include "engine/ops/kernel_rounding.h"
#include "engine/vk/memory_report.h"
#include "eval/fashion_mnist.h"
#include "eval/frechet.h"
#include "eval/image_judge.h"
#include "eval/reference_stats.h"
#include "eval/run_quality.h"
#include "eval/sample_completeness.h"
#include "eval/sample_set.h"
#include "eval/sample_summary.h"
#include "frontend/arg_parser.h"
#include "frontend/device_choice.h"
#include "frontend/method_options_text.h"
#include "frontend/model_loading.h"
#include "frontend/sampler_options.h"
#include "common/text.h"
#include "frontend/shard_option.h"

namespace vkspec::cli {
namespace {

using Run = frontend::MethodRun;

struct RunResult {
  Run run;
  SampleSet samples;  // every image of the run (this process's and, with --samples, earlier ones)
  SampleSummary sum;
  double speedup = 0;
  RunQuality quality;               // FID, KID, intervals, differences against ar
  bool memory_known = false;        // generated in this process
  MemoryReport memory;              // after the run
  KernelProfile kernels;            // --profile: GPU time by kernel of the images generated here
  // Images generated here per second of wall-clock over all devices together (-1: none generated
  // here). What --devices buys; latency and speedup are per image, timed on its own device.
  double images_per_s = -1;
  // --iterations, Jacobi window methods: per-iteration statistics of the images generated here.
  std::optional<IterationStats> iterations;
};

// "a=1,b=2", with "batch=B" for a batched run ("" for neither).
std::string run_options_text(const Run& run) {
  std::string text = frontend::format_method_options(run.options);
  if (run.batch > 1) text += (text.empty() ? "" : ",") + std::string("batch=") + std::to_string(run.batch);
  return text;
}

// "method" or "method a=1,b=2".
std::string run_label(const Run& run) {
  const std::string options = run_options_text(run);
  return run.method + (options.empty() ? "" : " " + options);
}

nlohmann::json measured(double v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string cell(double v, const char* fmt) {
  if (v < 0) return "-";
  char b[32];
  std::snprintf(b, sizeof(b), fmt, v);
  return b;
}

// --sweep batch=1,4,16: each method that can batch once per batch size, the others at 1.
std::vector<Run> plan_batch_runs(const std::vector<std::string>& methods, const MethodOptions& given,
                                 const std::vector<std::string>& values) {
  std::vector<int64_t> sizes;
  for (const std::string& v : values) {
    char* end = nullptr;
    const long long b = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || b < 1 || b > kMaxBatchRows / 2)
      throw Error("bench: --sweep batch: '" + v + "' is not a batch size in [1, " + std::to_string(kMaxBatchRows / 2) + "]");
    sizes.push_back(b);
  }
  std::vector<Run> runs;
  for (const std::string& m : methods) {
    const MethodOptions options = options_for(m, given);
    if (!find_strategy(m).make_batch) {
      runs.push_back({m, options, 1});
      continue;
    }
    for (int64_t b : sizes) runs.push_back({m, options, b});
  }
  return runs;
}

// The runs: each method once with the options it knows (at `batch` images per forward), or once
// per value of a swept option.
std::vector<Run> plan_runs(const std::vector<std::string>& methods, const MethodOptions& given,
                           const std::string& sweep, int64_t batch) {
  std::string key;
  std::vector<std::string> values;
  if (!sweep.empty()) {
    const size_t eq = sweep.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("bench: --sweep expects KEY=V1,V2,..., got '" + sweep + "'");
    key = sweep.substr(0, eq);
    values = split(sweep.substr(eq + 1), ',');
    if (values.empty()) throw Error("bench: --sweep " + key + " has no values");
    if (key == "batch") {
      if (batch > 1) throw Error("bench: --batch is both given and swept");
      return plan_batch_runs(methods, given, values);
    }
    if (given.count(key)) throw Error("bench: --" + key + " is both given and swept");
    bool used = false;
    for (const std::string& m : methods) used = used || !options_for(m, {{key, values[0]}}).empty();
    if (!used) throw Error("bench: none of the methods has an option --" + key + " to sweep");
  }
  std::vector<Run> runs;
  for (const std::string& m : methods) {
    const MethodOptions base = options_for(m, given);
    if (key.empty() || options_for(m, {{key, values[0]}}).empty()) {
      runs.push_back({m, base, batch});
      continue;
    }
    for (const std::string& v : values) {
      MethodOptions o = base;
      o[key] = v;
      runs.push_back({m, o, batch});
    }
  }
  return runs;
}

// A run in file names: "sjd_window=16" (no folder separators or spaces).
std::string run_file_name(const Run& run) {
  std::string name = run.method;
  for (const auto& [k, v] : run.options) name += "_" + k + "=" + v;
  if (run.batch > 1) name += "_batch=" + std::to_string(run.batch);
  for (char& c : name)
    if (c == '/' || c == ' ') c = '%';
  return name;
}

// The file a run's images are kept in under --samples DIR: one per method, options and first seed,
// so shards started with other --seed values never write the same file.
std::string samples_file(const std::string& dir, const Run& run, uint64_t seed) {
  return dir + "/" + run_file_name(run) + "_seed" + std::to_string(seed) + ".safetensors";
}

// --npz and --out-dir of one run: its requested seeds in seed order, generated now or resumed.
void write_run_samples(const SampleOutputs& where, TokenImages& decoder, const SampleSet& shown, int64_t tokens) {
  std::vector<SampleId> ids;
  for (const ImageRecord& im : shown.images) ids.push_back({im.seed, im.class_id, &im.tokens});
  std::sort(ids.begin(), ids.end(), [](const SampleId& a, const SampleId& b) { return a.seed < b.seed; });
  write_samples(where, decoder, ids, tokens);
  for (const std::string& f : {where.npz, where.out_dir})
    if (!f.empty()) std::fprintf(stderr, "bench: wrote %zu images to %s\n", ids.size(), f.c_str());
}

// Identities of model files, hashed once per process. Not locked: one thread at a time asks (worker
// 0's task building the runs' metadata, or --report on the main thread).
const std::string& identity(const std::string& path) {
  static std::map<std::string, std::string> known;
  auto it = known.find(path);
  if (it == known.end()) it = known.emplace(path, file_identity(path)).first;
  return it->second;
}

// What identifies a run's images: see eval/sample_set.h. classifier: its path, "" when not judged.
std::map<std::string, std::string> run_meta(const Run& run, const frontend::LoadedModels& loaded,
                                            const SamplerSettings& ss, const std::string& classifier,
                                            const std::string& devices, const std::string& rounding) {
  const StrategyNeeds needs = find_strategy(run.method).needs_for(run.options);
  std::string models = "target=" + identity(loaded.target->path());
  if (needs.drafter && loaded.drafter) models += ";drafter=" + identity(loaded.drafter->path());
  if (needs.low_res && loaded.low_res) models += ";low_res=" + identity(loaded.low_res->path());
  if (needs.heads && loaded.heads) models += ";heads=" + identity(loaded.heads->path());
  if (needs.latent_heads && loaded.latent_heads) models += ";latent_heads=" + identity(loaded.latent_heads->path());
  if (needs.eagle && loaded.eagle) models += ";eagle=" + identity(loaded.eagle->path());
  if (needs.sr_net && loaded.sr_net) models += ";sr_net=" + identity(loaded.sr_net->path());
  if (needs.latent_upsampler && loaded.latent_upsampler)
    models += ";latent_upsampler=" + identity(loaded.latent_upsampler->path());
  // The tokenizer draws the judged images (and drafts MuLo-SD's and LANTERN's neighbours); its
  // key stays "vq" so that sample files written before still resume.
  if (loaded.tokenizer && (!classifier.empty() || needs.tokenizer || needs.neighbours))
    models += ";vq=" + identity(loaded.tokenizer->path());
  // The neighbour table is the codebook's (vq) under a metric: another metric is another table.
  // Absent means l2, the only metric before 2026-11-26, so those sample files still resume.
  if (needs.neighbours && needs.neighbour_metric != NeighbourMetric::L2)
    models += std::string(";neighbours=") + neighbour_metric_name(needs.neighbour_metric);
  std::map<std::string, std::string> meta = {{"method", run.method},
                                              {"options", frontend::format_method_options(run.options)},
                                              {"models", models},
                                              {"sampler", ss.str()},
                                              {"classifier", classifier.empty() ? "none" : identity(classifier)},
                                              {"device", devices}};
  // Absent where the kernels round as before the key existed, so those files still resume.
  if (!rounding.empty()) meta["rounding"] = rounding;
  // The tokens are batch 1's; the timings are not, so a batch's images are a run of their own.
  if (run.batch > 1) meta["batch"] = std::to_string(run.batch);
  return meta;
}

// The target model of a run, "NAME#HASH" (ar is compared with runs on the same target).
std::string target_of(const SampleSet& s) {
  const std::string& m = s.meta.at("models");
  const std::string first = m.substr(0, m.find(';'));  // "target=NAME#HASH"
  return first.substr(first.find('=') + 1);
}

struct ReportHeader {
  std::string device, model, sampler;
  std::string device_note;  // a live run's lavapipe threads (cli/run_info.h)
  int64_t image_tokens = 0;
  bool profile = false;
  size_t workers = 1;  // --devices: how many generated at once
  nlohmann::json extra;  // JSON fields of the live run (drafter)
};

// GPU ms per image of each model (and of sampling), from the steps' timestamps.
nlohmann::json stages_json(const SampleSummary& m) {
  nlohmann::json j;
  for (int k = 0; k < ImageRecord::kStageCount; ++k) j[ImageRecord::kStages[k]] = m.stage_ms_mean[static_cast<size_t>(k)];
  return j;
}

// Each run's speedup and quality against ar one image per forward (the latency every paper
// compares with) on the same target, sampler and classifier (eval/run_quality.h); returns the
// fewest images judged by a run with features (0: none), for the FID note.
int64_t assess_runs(std::vector<RunResult>& results, const ReferenceSet& reference_set, const QualityOptions& quality) {
  auto ar_of = [&](const RunResult& r) -> const RunResult* {
    const RunResult* found = nullptr;
    for (const auto& a : results)
      if (a.run.method == reference_method_name() && target_of(a.samples) == target_of(r.samples) &&
          a.samples.meta.at("sampler") == r.samples.meta.at("sampler") &&
          a.samples.meta.at("classifier") == r.samples.meta.at("classifier") && (!found || a.run.batch < found->run.batch))
        found = &a;
    return found;
  };
  int64_t fewest = 0;
  const QualityReference reference = quality_reference(reference_set);
  for (auto& r : results) {
    const RunResult* ar = ar_of(r);
    r.speedup = ar && r.sum.latency_median > 0 ? ar->sum.latency_median / r.sum.latency_median : 0;
    r.quality = assess_quality(r.sum, ar ? &ar->sum : nullptr, reference, quality);
    const int64_t judged = r.sum.feature_dim ? static_cast<int64_t>(r.sum.features.size()) / r.sum.feature_dim : 0;
    if (judged >= 2) fewest = fewest ? std::min(fewest, judged) : judged;
  }
  return fewest;
}

// The main table: speed first, as wall-clock against ar in this run, then forwards and quality.
void print_speed_table(const std::vector<RunResult>& results, const ReportHeader& h) {
  std::printf("device: %s%s%s\nmodel: %s (%lld tokens per image), %s\n\n", h.device.c_str(),
              h.device_note.empty() ? "" : "; ", h.device_note.c_str(), h.model.c_str(),
              static_cast<long long>(h.image_tokens), h.sampler.c_str());
  const bool with_islands =
      std::any_of(results.begin(), results.end(), [](const RunResult& r) { return r.sum.islands_mean > 0; });
  // Speed leads, as wall-clock against ar in this run; forwards count the target's (NFE) and every
  // model's (all fwd: target, drafter or low-resolution model, draft heads).
  std::printf("%-10s %-24s %6s %8s %11s %9s %8s %7s %8s %8s %9s %9s %7s %7s%s\n", "method", "options", "images",
              "speedup", "latency ms", "p90 ms", "images/s", "NFE", "all fwd", "acc.len", "tokens/s", "class acc", "FID",
              "FID/ar", with_islands ? "  islands" : "");
  for (const auto& r : results) {
    const SampleSummary& m = r.sum;
    std::printf("%-10s %-24s %6lld %7.2fx %11.1f %9.1f %8s %7.1f %8.1f %8.2f %9.1f %9s %7s %7s", r.run.method.c_str(),
                run_options_text(r.run).c_str(), static_cast<long long>(m.images), r.speedup, m.latency_median,
                m.latency_p90, cell(r.images_per_s, "%.3g").c_str(), m.nfe_mean, m.all_forwards_mean(), m.accepted_length_mean,
                m.tokens_per_s, m.class_accuracy >= 0 ? (cell(100.0 * m.class_accuracy, "%.1f") + "%").c_str() : "-",
                cell(r.quality.fid.value_or(-1), "%.2f").c_str(),
                cell(r.quality.fid_vs_ar.value_or(-1), "%.2f").c_str());
    if (with_islands) std::printf(" %8.1f", m.islands_mean);
    std::printf("\n");
  }
}

// What a forward costs besides its arithmetic: memory, dispatches, transfers, submits, CPU and GPU time.
void print_overheads(const std::vector<RunResult>& results, const ReportHeader& h) {
  // Long runs (the soak in docs/reliability.md) read these to see that nothing grows.
  if (std::any_of(results.begin(), results.end(), [](const RunResult& r) { return r.memory_known; })) {
    // Interleaved runs finish together, so each one's figure is the end of the command's.
    const bool interleaved = h.extra.is_object() && h.extra.value("order", "") == "interleaved";
    std::printf(interleaved ? "\nmemory at the end of the interleaved runs (RSS / device in use, MiB):"
                            : "\nmemory after each run (RSS / device in use, MiB):");
    for (const auto& r : results)
      if (r.memory_known) std::printf(" %s %.1f/%.1f;", r.run.method.c_str(), r.memory.rss_mib, r.memory.device_in_use_mib);
    std::printf("\n");
  }
  // Per-dispatch overhead is paid per token: the count to bring down next to milliseconds.
  std::printf("dispatches per image / per target forward (all models' forwards, sampling, acceptance):");
  for (const auto& r : results) {
    const double n = static_cast<double>(r.sum.images);
    std::printf(" %s %.0f / %.1f;", r.run.method.c_str(), static_cast<double>(r.sum.work.dispatches) / n,
                static_cast<double>(r.sum.work.dispatches) / (n * r.sum.nfe_mean));
  }
  std::printf("\n");
  std::printf("per target forward: transfers, submits, busy CPU ms%s:", h.profile ? ", GPU ms" : "");
  for (const auto& r : results) {
    const double f = static_cast<double>(r.sum.images) * r.sum.nfe_mean;
    std::printf(" %s %.1f, %.1f, %.1f", r.run.method.c_str(), static_cast<double>(r.sum.work.transfers) / f,
                static_cast<double>(r.sum.work.submits) / f, r.sum.busy_ms / f);
    if (h.profile) std::printf(", %.1f", r.sum.device_ms / f);
    std::printf(";");
  }
  std::printf("\n");
  if (h.profile) {
    std::printf("GPU ms per image by model:");
    for (const auto& r : results) {
      std::printf(" %s", r.run.method.c_str());
      for (int k = 0; k < ImageRecord::kStageCount; ++k)
        if (r.sum.stage_ms_mean[static_cast<size_t>(k)] > 0)
          std::printf(" %s %.0f", ImageRecord::kStages[k], r.sum.stage_ms_mean[static_cast<size_t>(k)]);
      std::printf(";");
    }
    std::printf("\n");
  }
}

// The results as JSON (--json).
void write_report_json(const std::vector<RunResult>& results, const ReportHeader& h, const std::string& json_path) {
  nlohmann::json j = h.extra;
  j["device"] = h.device;
  j["model"] = h.model;
  j["image_tokens"] = h.image_tokens;
  j["sampler"] = h.sampler;
  j["results"] = nlohmann::json::array();
  for (const auto& r : results) {
    const SampleSummary& m = r.sum;
    const double n = static_cast<double>(m.images);
    nlohmann::json result = {{"method", r.run.method},
                            {"options", r.run.options},
                            {"batch", r.run.batch},
                            {"images", m.images},
                            {"devices", r.samples.meta.at("device")},
                            {"nfe_mean", m.nfe_mean},
                            {"draft_forwards_mean", m.draft_forwards_mean},
                            {"head_forwards_mean", m.head_forwards_mean},
                            {"all_forwards_mean", m.all_forwards_mean()},
                            {"time_ms_by_model", h.profile ? stages_json(m) : nlohmann::json(nullptr)},
                            {"time_ms_by_kernel", kernel_json(r.kernels)},
                            {"accepted_length_mean", m.accepted_length_mean},
                            {"latency_ms_median", m.latency_median},
                            {"latency_ms_p90", m.latency_p90},
                            {"speedup", r.speedup},
                            {"images_per_s", measured(r.images_per_s)},
                            {"tokens_per_s", m.tokens_per_s},
                            {"class_accuracy", measured(m.class_accuracy)},
                            {"fid", measured(r.quality.fid.value_or(-1))},
                            {"fid_vs_ar", measured(r.quality.fid_vs_ar.value_or(-1))},
                            {"islands_mean", m.islands_mean},
                            {"dispatches_per_image", static_cast<double>(m.work.dispatches) / n},
                            {"dispatches_per_forward", static_cast<double>(m.work.dispatches) / (n * m.nfe_mean)},
                            {"transfers_per_image", static_cast<double>(m.work.transfers) / n},
                            {"submits_per_image", static_cast<double>(m.work.submits) / n},
                            {"barriers_per_image", static_cast<double>(m.work.barriers) / n},
                            {"busy_cpu_ms_per_image", m.busy_ms / n},
                            {"device_ms_per_image", h.profile ? nlohmann::json(m.device_ms / n) : nlohmann::json(nullptr)},
                            {"rss_mib_after", r.memory_known ? nlohmann::json(r.memory.rss_mib) : nlohmann::json(nullptr)},
                            {"device_mib_after",
                             r.memory_known ? nlohmann::json(r.memory.device_in_use_mib) : nlohmann::json(nullptr)}};
    result.update(quality_json(r.quality));
    result["iterations"] = r.iterations ? iteration_json(*r.iterations) : nlohmann::json(nullptr);
    j["results"].push_back(std::move(result));
  }
  write_json_file(json_path, j, "bench");
}

// Speedups, quality against the test set and against ar's samples, the tables and the JSON: the
// same for a live run and for --report.
void report(std::vector<RunResult>& results, const ReportHeader& h, const ReferenceSet& reference_set,
            const QualityOptions& quality, const std::optional<std::string>& json_path) {
  const int64_t fewest = assess_runs(results, reference_set, quality);
  print_speed_table(results, h);
  print_overheads(results, h);
  std::printf("speedup: median wall-clock latency of ar (one image per forward) / the method's, same run; images/s: "
              "images generated here per second of the run's wall-clock (batch=B: B images per forward, each "
              "image's latency the batch's); NFE: target forwards; all fwd: every model's forwards\n");
  if (h.workers > 1)
    std::printf("%zu devices at once: each image timed on its own device while the others ran (on a shared one, "
                "every method's latency grows alike)\n", h.workers);
  if (fewest && fewest < 1000)
    std::printf("\nFID from %lld images or more per method (quote FID from 1000 or more)\n",
                static_cast<long long>(fewest));
  std::vector<QualityRow> rows;
  for (const auto& r : results)
    rows.push_back({r.run.method, run_options_text(r.run), r.sum.images, r.sum.class_accuracy,
                    r.sum.feature_dim, &r.quality});
  print_quality_table(rows, quality.precision_recall);
  std::vector<IterationRow> iteration_rows;
  for (const auto& r : results)
    if (r.iterations) iteration_rows.push_back({r.run.method, run_options_text(r.run), &*r.iterations});
  print_iteration_table(iteration_rows);
  if (h.profile)
    for (const auto& r : results) print_kernel_table(run_label(r.run), r.kernels);
  if (json_path) write_report_json(results, h, *json_path);
}

// Every merged run against the seeds its commands were asked for (eval/sample_completeness.h):
// an error naming the missing seeds and what to run again, or with --allow-partial a warning.
void check_complete(const std::vector<SampleSet>& groups, bool allow_partial) {
  std::string missing;
  for (const SampleSet& g : groups) {
    const Completeness c = completeness(g);
    if (c.complete()) continue;
    std::string rerun;
    for (const std::string& r : c.rerun) rerun += (rerun.empty() ? "" : ", ") + r;
    const std::string opts = g.meta.at("options");
    missing += (missing.empty() ? " " : "\n  ") + g.meta.at("method") + (opts.empty() ? "" : " " + opts) + ": " + std::to_string(c.missing) +
               " of " + std::to_string(c.expected) + " images missing, seeds " + c.missing_seeds + "; run again: " + rerun;
  }
  if (missing.empty()) return;
  const std::string how =
      "\n(the same bench command with the same --samples folder resumes a shard where it stopped)";
  if (!allow_partial) throw Error("bench --report: incomplete:" + missing + how + "; --allow-partial reports what there is");
  std::fprintf(stderr, "bench --report: warning (--allow-partial): incomplete:%s\n", missing.c_str());
}

// --npz/--out-dir of --report: each merged run's images decoded with the tokenizer (--vq, default
// the shipped one), checked against the one its sample files recorded, if they did.
void write_report_samples(const frontend::ArgParser& ap, const SampleOutputs& outputs,
                          const std::vector<RunResult>& results, int64_t tokens_per_image) {
  const std::string vq = frontend::ModelCatalog(frontend::model_files(ap)).path(frontend::ModelRole::Tokenizer);
  for (const auto& r : results) {
    const std::string& models = r.samples.meta.at("models");
    const size_t at = models.find("vq=");
    if (at == std::string::npos) continue;
    const std::string recorded = models.substr(at + 3, models.find(';', at) - at - 3);
    if (recorded != identity(vq))
      throw Error("bench --report: " + run_label(r.run) + " was decoded by " + recorded + ", --vq is " + identity(vq) +
                  " (give the tokenizer of the samples)");
  }
  int64_t grid = 1;
  while (grid * grid < tokens_per_image) ++grid;
  if (grid * grid != tokens_per_image)
    throw Error("bench --report: " + std::to_string(tokens_per_image) + " tokens per image is not a square grid");
  auto ctx = frontend::open_device();
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(*ctx, vq, DType::F16, ImageJudge::kBatch, grid);
  TokenImages decoder(*ctx, *tokenizer, grid, ImageJudge::kBatch);
  for (const auto& r : results) write_run_samples(run_outputs(outputs, run_file_name(r.run)), decoder, r.samples, tokens_per_image);
}

// vkspec bench --report DIR|FILE[,...]: the table of every run found in sample files, merged.
int bench_report(const frontend::ArgParser& ap) {
  const SampleOutputs outputs = sample_outputs(ap);
  std::vector<std::string> files;
  for (const std::string& p : split(*ap.get("--report"), ',')) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.path().extension() == ".safetensors") found.push_back(e.path().string());
      if (found.empty()) throw Error("bench --report: no .safetensors sample files in " + p);
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      if (!std::filesystem::exists(p, ec)) throw Error("bench --report: " + p + " does not exist");
      files.push_back(p);
    }
  }
  std::vector<SampleSet> sets;
  for (const std::string& f : files) sets.push_back(read_sample_set(f));
  std::vector<SampleSet> groups = merge_sample_sets(std::move(sets));
  check_complete(groups, ap.flag("--allow-partial"));
  std::vector<RunResult> results;
  int64_t tokens_per_image = 0;
  for (SampleSet& g : groups) {
    RunResult r;
    r.run = {g.meta.at("method"), frontend::parse_method_options(g.meta.at("options")),
             g.meta.count("batch") ? std::stoll(g.meta.at("batch")) : 1};
    r.sum = summarize_samples(g);
    tokens_per_image = std::max<int64_t>(tokens_per_image, g.images.empty() ? 0 : static_cast<int64_t>(g.images[0].tokens.size()));
    r.samples = std::move(g);
    results.push_back(std::move(r));
  }
  if (outputs.any()) write_report_samples(ap, outputs, results, tokens_per_image);
  for (auto& r : results) r.samples.images.clear();  // the summaries hold what the table needs
  // FID against the test set needs the classifier that judged the samples.
  ReferenceSet reference;
  const std::string dataset = ap.get_or("--dataset", fashion_mnist_dir());
  std::string judged_by;
  for (const auto& r : results)
    if (r.samples.meta.at("classifier") != "none") judged_by = r.samples.meta.at("classifier");
  if (!judged_by.empty() && dataset != "none") {
    const std::string cls = frontend::ModelCatalog(frontend::model_files(ap)).path(frontend::ModelRole::Classifier);
    if (identity(cls) != judged_by)
      throw Error("bench --report: the samples were judged by " + judged_by + ", --classifier is " + identity(cls) +
                  " (give the classifier that judged them, or --dataset none)");
    auto ctx = frontend::open_device();
    reference = fashion_mnist_test_reference(*ctx, cls, dataset);
  }
  ReportHeader h;
  std::set<std::string> devices, targets, samplers;
  for (const auto& r : results) {
    devices.insert(r.samples.meta.at("device"));
    targets.insert(target_of(r.samples));
    samplers.insert(r.samples.meta.at("sampler"));
  }
  auto join = [](const std::set<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : "; ") + s;
    return out;
  };
  h.device = join(devices);
  h.model = join(targets);
  h.sampler = join(samplers);
  h.image_tokens = tokens_per_image;
  h.extra["report_of"] = files;
  report(results, h, reference, {ap.flag("--precision-recall")}, ap.get("--json"));
  return 0;
}

// After a worker failed: the images that finished are judged and saved (judge_and_save), or when
// that fails too (worker 0's device is the one lost) the judged ones alone, since a sample file
// holds features for all of its images or none. Never throws: the worker's error is what to report.
void save_after_failure(SampleSet& set, std::vector<size_t>& unjudged, const std::string& file,
                        const std::function<void()>& judge_and_save) {
  try {
    judge_and_save();
    return;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: the %zu image(s) waiting to be judged are not kept: %s\n", unjudged.size(), e.what());
  }
  set.images.resize(set.images.size() - unjudged.size());  // the unjudged are the last ones
  unjudged.clear();
  if (file.empty()) return;
  try {
    write_sample_set(file, set);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: could not save %s: %s\n", file.c_str(), e.what());
  }
}

// What worker 0 keeps besides the models (bench_workers()): the judge and the --npz/--out-dir decoder.
struct BenchWorker : ModelWorker {
  std::unique_ptr<ImageJudge> judge;
  std::optional<TokenImages> decoder;
};

// Pipelines first run on any worker so far: a CPU driver compiles each inside a timed image's
// fence wait, so those run after the warm-up are reported with the results.
constexpr int64_t kAutoWarmupImages = 8;  // the most --warmup auto runs per method

uint64_t first_uses(DevicePool& pool) {
  uint64_t n = 0;
  for (size_t w = 0; w < pool.size(); ++w)
    n += pool.submit<BenchWorker>(w, [](Context& ctx, BenchWorker&) { return ctx.first_uses(); }, true).get();
  return n;
}

}  // namespace

std::vector<OptionSection> bench_sections() {
  std::vector<OptionSection> s = {
      {"",
       "",
       {{"--methods", "M1,M2,...", "the methods to compare (default ar; ar gives the speedups)"},
        {"--images", "N", "images per method (default 10; with --shard, of all shards together)"},
        {"--seed", "S",
         "seed of the first image; image i has seed S + i and class (S + i) mod the classes (default 0)"},
        frontend::shard_option(),
        {"--warmup", "N|auto", "untimed images per method first; auto (the default): at least one, then more "
                               "while the last one ran a pipeline for the first time (a CPU driver compiles it "
                               "then), at most 8"},
        {"--order", "interleaved|sequential",
         "interleaved (default): image i of every method before image i + 1 of any, so the machine's load "
         "changes reach every method alike (fair wall-clock ratios); sequential: one method after another"},
        {"--sweep", "KEY=V1,V2,...",
         "run each method that knows option KEY once per value; batch=1,4,16: each method that can batch once "
         "per batch size (the others at 1)"},
        {"--json", "FILE", "also write every result as JSON"},
        {"--profile", "", "GPU time per model and per kernel (per-command timestamps)"},
        {"--iterations", "",
         "Jacobi window methods (sjd, scd-mc, scd-gs, lantern): per visit of a position, how often its next draft "
         "equals this one (collision) and the share accepted; of the images generated, not of resumed ones"},
        {"--precision-recall", "", "also precision and recall against the test set (k = 3 neighbours, O(N^2))"},
        {"--samples", "DIR", "keep every image's record in DIR and resume from what it holds"},
        {"--report", "DIR|FILE[,...]",
         "no generation: one table from the sample files of earlier --samples runs (with --npz/--out-dir: their "
         "images); fails naming the missing seeds and shards when a run is incomplete"},
        {"--allow-partial", "", "--report: a table of what there is when seeds are missing (still named, on stderr)"},
        {"--dataset", "DIR|none", "Fashion-MNIST for FID against the test set (none: no such FID)"},
        frontend::classifier_option()}}};
  frontend::append_options(s[0].options, sample_output_options(true));
  frontend::append_options(s[0].options, device_pool_options());
  frontend::append_options(s[0].options, batch_options());
  for (OptionSection& shared : run_option_sections()) s.push_back(std::move(shared));
  return s;
}

int cmd_bench(const Args& args) {
  // --synthetic times the forwards of a generated model instead of generating images.
  for (const std::string& a : args)
    if (a == "--synthetic" || a.rfind("--synthetic=", 0) == 0) return cmd_bench_synthetic(args);
  frontend::ArgParser ap("bench", all_options(bench_sections()));
  ap.parse(args);
  if (auto path = ap.get("--json")) check_output_path(*path, "--json");
  if (ap.get("--report")) {
    for (const char* f :
         {"--methods", "--images", "--seed", "--shard", "--sweep", "--warmup", "--order", "--samples", "--devices", "--batch"})
      if (ap.get(f)) throw Error(std::string("bench --report reads finished samples; ") + f + " does not apply");
    if (ap.flag("--iterations"))
      throw Error("bench --report: --iterations needs every step of an image, which sample files do not keep");
    return bench_report(ap);
  }
  if (ap.flag("--allow-partial")) throw Error("bench: --allow-partial applies to --report only");
  const std::vector<std::string> methods = split(ap.get_or("--methods", reference_method_name()), ',');
  if (methods.empty()) throw Error("bench: --methods is empty");
  for (const std::string& m : methods) {
    try {
      find_strategy(m);
    } catch (const Error& e) {
      throw Error(std::string("bench: ") + e.what());
    }
  }
  const int64_t run_images = ap.get_int("--images", 10, 1, 100000);
  // -1: auto (see the option's help).
  const int64_t warmup = ap.get_or("--warmup", "auto") == "auto" ? -1 : ap.get_int("--warmup", 1, 0, 100);
  const std::string order = ap.get_or("--order", "interleaved");
  if (order != "interleaved" && order != "sequential")
    throw Error("bench: --order must be interleaved or sequential, got " + order);
  const uint64_t run_seed = static_cast<uint64_t>(ap.get_int("--seed", 0, 0, (1ll << 62)));
  // --shard: this command makes the seed range [seed, seed + images) of the run's; everything below
  // (sample file, resume, table, outputs) is that of `--seed seed --images images`, and the sample
  // files also record the whole run's seeds so --report can tell what is missing.
  const Shard shard = frontend::shard_from(ap, run_images, "bench");
  const ImageBlock block = shard_block(run_images, shard);
  const uint64_t seed = run_seed + static_cast<uint64_t>(block.begin);
  const int64_t images = block.size();
  // --samples DIR keeps every image's record there and resumes what a file already holds.
  const std::string samples_dir = ap.get_or("--samples", "");
  if (!samples_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(samples_dir, ec))
      throw Error("bench: --samples " + samples_dir + " is not a folder (create it first)");
    check_output_path(samples_dir + "/x", "--samples");
  }
  // GPU timestamps around every command of every step (a little overhead of their own).
  const bool profile = ap.flag("--profile");
  const MethodOptions given = given_method_options(ap);
  check_used(given, methods);
  const std::vector<Run> runs = plan_runs(methods, given, ap.get_or("--sweep", ""), batch_from(ap, methods, "bench"));
  const SampleOutputs outputs = sample_outputs(ap);
  std::vector<SampleOutputs> run_outs(runs.size());
  if (outputs.any())
    for (size_t i = 0; i < runs.size(); ++i) run_outs[i] = run_outputs(outputs, run_file_name(runs[i]));

  const frontend::ModelCatalog catalog(frontend::model_files(ap));
  // --classifier none: no class accuracy (and no tokenizer needed), e.g. for untrained models.
  const bool judged = catalog.given(frontend::ModelRole::Classifier) != "none";
  const std::string classifier = judged ? catalog.path(frontend::ModelRole::Classifier) : "";
  frontend::ModelRequest request = frontend::request_for(catalog, runs);
  for (const Run& run : runs) request.batch = std::max(request.batch, run.batch);
  // One worker per --devices entry with its own copy of the models; worker 0 also judges the
  // images (in the batches a single device would) and decodes --npz/--out-dir, between its own
  // images, so quality and files are the single-device run's.
  auto instance = std::make_shared<Instance>();
  DevicePool pool(instance, device_list(ap.get("--devices"), *instance), ContextOptions::from_environment(),
                  [&](Context& ctx, size_t worker) {
                    auto w = std::make_unique<BenchWorker>();
                    frontend::ModelRequest r = request;
                    r.tokenizer = worker == 0 && (judged || outputs.any());
                    r.tokenizer_batch = ImageJudge::kBatch;
                    w->loaded = frontend::load_models(ctx, catalog, r);
                    w->models = w->loaded.set(ctx);
                    const int64_t grid = w->loaded.target->config().grid_size;
                    if (worker == 0 && judged) w->judge = std::make_unique<ImageJudge>(ctx, *w->loaded.tokenizer, grid, classifier);
                    if (worker == 0 && outputs.any()) w->decoder.emplace(ctx, *w->loaded.tokenizer, grid, ImageJudge::kBatch);
                    return w;
                  });
  auto on_worker0 = [&pool](auto fn) { return pool.submit<BenchWorker>(0, std::move(fn), true).get(); };
  const GptConfig cfg = on_worker0([](Context&, BenchWorker& w) { return w.loaded.target->config(); });
  const SamplerSettings ss =
      frontend::sampler_overrides(ap).applied_to(SamplerSettings::from_defaults(cfg.defaults));
  const std::string devices = pool.device_names();
  std::string drafter;
  std::vector<std::map<std::string, std::string>> metas = on_worker0([&](Context& ctx, BenchWorker& w) {
    if (w.loaded.drafter) drafter = w.loaded.drafter->path();
    // The first device's kernels (a pool mixing CPU and GPU devices records the first one's).
    const std::string rounding = ops::kernel_rounding(ctx.caps());
    std::vector<std::map<std::string, std::string>> m;
    for (const Run& run : runs) m.push_back(run_meta(run, w.loaded, ss, classifier, devices, rounding));
    return m;
  });
  ReferenceSet reference;
  // Sample files to resume are checked before anything slow (the test set's statistics, the
  // first image), so a folder of other settings fails in a second.
  std::vector<SampleSet> resumed(runs.size());
  std::vector<std::string> files(runs.size());  // each run's sample file, "" without --samples
  for (size_t i = 0; i < runs.size(); ++i) {
    resumed[i].meta = std::move(metas[i]);
    resumed[i].meta["run_seeds"] = run_seeds_text(run_seed, run_images, shard.count);
    if (!samples_dir.empty()) files[i] = samples_file(samples_dir, runs[i], seed);
    const std::string& file = files[i];
    std::error_code ec;
    if (file.empty() || !std::filesystem::exists(file, ec)) continue;
    SampleSet old = read_sample_set(file);
    auto rounding = [](const SampleSet& s) {  // "" where absent (kernel_rounding.h)
      const auto it = s.meta.find("rounding");
      return it == s.meta.end() ? std::string() : it->second;
    };
    if (sample_set_key(old) != sample_set_key(resumed[i]))
      throw Error("bench: " + file + " holds images of other settings (" + old.meta.at("models") + ", " +
                  old.meta.at("sampler") + ", kernel rounding \"" + rounding(old) + "\" where this run has \"" +
                  rounding(resumed[i]) + "\"); use another --samples folder");
    resumed[i].images = std::move(old.images);
  }
  if (judged) {
    // --dataset none: class accuracy and drift from ar only.
    const std::string dataset = ap.get_or("--dataset", fashion_mnist_dir());
    if (dataset != "none")
      reference = on_worker0([&](Context& ctx, BenchWorker&) { return fashion_mnist_test_reference(ctx, classifier, dataset); });
  }
  // One run's generation in progress: its result, the images still to make and those made but
  // not yet judged, and its share of the wall-clock.
  struct RunState {
    RunResult r;
    std::string label, file;
    ShardedRun todo;
    int64_t jacobi_window = 0;
    std::vector<size_t> unjudged;  // records waiting for the judge's batch
    double seconds = 0;            // generating this run's images
  };
  std::vector<RunState> states(runs.size());
  // Image i of this command: seed + i, class (seed + i) mod classes, so any split of a seed range
  // over several commands draws the same images.
  auto inputs = [&](const Run& run, uint64_t image_seed) {
    StrategyInputs in;
    in.condition =
        std::make_shared<ClassLabel>(static_cast<int64_t>(image_seed % static_cast<uint64_t>(cfg.num_classes)));
    in.seed = image_seed;
    in.sampler = ss;
    in.options = run.options;
    in.profile = profile;
    return in;
  };
  size_t longest = 0, total = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    RunState& st = states[i];
    st.r.run = runs[i];
    st.label = run_label(runs[i]);
    st.file = files[i];
    SampleSet& set = st.r.samples;
    set = std::move(resumed[i]);
    std::set<uint64_t> have;
    for (const ImageRecord& im : set.images) have.insert(im.seed);
    if (!set.images.empty())
      std::fprintf(stderr, "bench: %s: %zu images already in %s\n", st.label.c_str(), set.images.size(),
                   st.file.c_str());
    st.todo.method = runs[i].method;
    // --iterations reads each image's steps, so those images keep their events.
    st.jacobi_window = find_strategy(runs[i].method).jacobi_window_for(runs[i].options);
    if (ap.flag("--iterations") && st.jacobi_window > 0) {
      st.r.iterations.emplace();
      st.todo.keep_events = true;
    }
    for (int64_t k = 0; k < images; ++k)
      if (!have.count(seed + static_cast<uint64_t>(k)))
        st.todo.inputs.push_back(inputs(runs[i], seed + static_cast<uint64_t>(k)));
    longest = std::max(longest, st.todo.inputs.size());
    total += st.todo.inputs.size();
  }
  auto judge_and_save = [&](RunState& st) {
    SampleSet& set = st.r.samples;
    if (judged && !st.unjudged.empty()) {
      const Verdict v = on_worker0([&](Context&, BenchWorker& w) {
        for (size_t j : st.unjudged) w.judge->add(set.images[j].tokens, set.images[j].class_id);
        return w.judge->take();
      });
      for (size_t j = 0; j < st.unjudged.size(); ++j) {
        ImageRecord& im = set.images[st.unjudged[j]];
        im.predicted = v.predicted[j];
        im.features.assign(v.features.begin() + static_cast<std::ptrdiff_t>(j * v.feature_dim),
                           v.features.begin() + static_cast<std::ptrdiff_t>((j + 1) * v.feature_dim));
      }
    }
    st.unjudged.clear();
    if (!st.file.empty()) write_sample_set(st.file, set);
  };
  // Untimed images first, every run's, on every device: pipelines are compiled on first use.
  for (size_t i = 0; i < runs.size(); ++i) {
    if (states[i].todo.inputs.empty()) continue;
    const int64_t most = warmup < 0 ? kAutoWarmupImages : warmup, b = runs[i].batch;
    for (int64_t k = 0; k < most; ++k) {
      const uint64_t before = first_uses(pool);
      std::vector<StrategyInputs> batch;  // a warm-up image is a whole batch: its forwards' shapes
      for (int64_t j = 0; j < b; ++j) batch.push_back(inputs(runs[i], seed + static_cast<uint64_t>(images + k * b + j)));
      warm_up(pool, runs[i].method, batch, b);
      if (warmup < 0 && first_uses(pool) == before) break;
    }
  }
  const uint64_t first_uses_before = first_uses(pool);
  // Interleaved (the default): a round makes the next image of every run in turn (one per device),
  // so a change in the machine's load during the command reaches every method alike and the
  // wall-clock ratios against ar stay fair on a shared machine; sequential: one run after another.
  const bool interleaved = order == "interleaved" && runs.size() > 1;
  // A round gives each run one batch per device (interleaved) or all of its images.
  auto round_of = [&](const Run& run) {
    return interleaved ? std::max<size_t>(pool.size(), 1) * static_cast<size_t>(run.batch) : std::max<size_t>(longest, 1);
  };
  std::optional<Progress> progress;
  if (interleaved && total > 0)
    progress.emplace("bench " + std::to_string(runs.size()) + " runs, interleaved", static_cast<int64_t>(total));
  try {
    for (size_t r = 0, any = 1; any; ++r) {
      any = 0;
      for (size_t i = 0; i < runs.size(); ++i) {
        RunState& st = states[i];
        const size_t round = round_of(runs[i]), first = r * round;
        if (first >= st.todo.inputs.size()) continue;
        any = 1;
        ShardedRun part;
        part.method = st.todo.method;
        part.keep_events = st.todo.keep_events;
        part.batch = runs[i].batch;
        part.inputs.assign(
            st.todo.inputs.begin() + static_cast<std::ptrdiff_t>(first),
            st.todo.inputs.begin() + static_cast<std::ptrdiff_t>(std::min(first + round, st.todo.inputs.size())));
        if (!interleaved)
          progress.emplace(
              "bench " + st.label + " (run " + std::to_string(i + 1) + "/" + std::to_string(runs.size()) + ")",
              static_cast<int64_t>(part.inputs.size()));
        part.on_finished = [&](size_t) { progress->image_done(); };
        // Images come back in seed order whichever device made them; records are saved a judge's
        // batch at a time, and on a failure whatever finished is judged and saved before the error shows.
        const auto started = std::chrono::steady_clock::now();
        generate_sharded(pool, part, [&](size_t, ShardedImage&& done) {
          Generation& g = done.generation;
          if (profile) st.r.kernels.add(g);
          if (st.r.iterations)
            st.r.iterations->add(jacobi_iteration_stats(g.events, st.jacobi_window, cfg.image_tokens()));
          // Timings as the sample file keeps them (float32), so that a summary of this run equals
          // one resumed from its files: a paired difference of two close times loses digits.
          auto stored = [](double ms) { return static_cast<double>(static_cast<float>(ms)); };
          ImageRecord im;
          im.busy_ms = stored(done.busy_ms);
          im.work = done.work;
          im.seed = g.seed;
          im.class_id = g.class_id;
          im.nfe = g.nfe;
          im.draft_forwards = g.draft_forwards;
          im.head_forwards = g.head_forwards;
          for (int k = 0; k < ImageRecord::kStageCount; ++k) {
            auto it = g.device_ms_by_stage.find(ImageRecord::kStages[k]);
            im.stage_ms[static_cast<size_t>(k)] = it == g.device_ms_by_stage.end() ? 0.0 : stored(it->second);
          }
          im.islands = g.islands;
          im.wall_ms = stored(g.wall_ms);
          im.device_ms = stored(g.device_ms);
          im.tokens = std::move(g.tokens);
          st.unjudged.push_back(st.r.samples.images.size());
          st.r.samples.images.push_back(std::move(im));
          if (static_cast<int64_t>(st.unjudged.size()) == ImageJudge::kBatch) judge_and_save(st);
        });
        st.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (!interleaved) progress->finish();
      }
    }
  } catch (...) {
    if (progress) progress->finish();
    for (RunState& st : states) save_after_failure(st.r.samples, st.unjudged, st.file, [&] { judge_and_save(st); });
    throw;
  }
  if (progress) progress->finish();
  const uint64_t late_compiles = first_uses(pool) - first_uses_before;
  if (late_compiles)
    std::fprintf(stderr,
                 "bench: %llu pipeline(s) first ran during timed images, after the warm-up (a CPU driver compiles "
                 "each then: raise --warmup for timings that exclude it)\n",
                 static_cast<unsigned long long>(late_compiles));
  std::vector<RunResult> results;
  for (size_t i = 0; i < runs.size(); ++i) {
    RunState& st = states[i];
    RunResult& r = st.r;
    if (!st.todo.inputs.empty()) r.images_per_s = static_cast<double>(st.todo.inputs.size()) / st.seconds;
    judge_and_save(st);
    // The table covers the requested seeds (a file may hold more from an earlier, longer command).
    SampleSet shown{r.samples.meta, {}, {}};
    for (const ImageRecord& im : r.samples.images)
      if (im.seed >= seed && im.seed < seed + static_cast<uint64_t>(images)) shown.images.push_back(im);
    r.sum = summarize_samples(shown);
    r.samples.images.clear();
    // Worker 0's device memory (and the process's RSS).
    r.memory = on_worker0([](Context& ctx, BenchWorker&) { return memory_report(ctx); });
    r.memory_known = true;
    // The table comes at the end; a line per finished run shows progress in logs of long runs.
    std::fprintf(stderr,
                 "bench: %s: %lld images, NFE %.1f, median %.0f ms per image, %s images/s on %zu device(s), %s\n",
                 st.label.c_str(), static_cast<long long>(r.sum.images), r.sum.nfe_mean, r.sum.latency_median,
                 cell(r.images_per_s, "%.3g").c_str(), pool.size(), r.memory.str().c_str());
    if (outputs.any())
      on_worker0(
          [&](Context&, BenchWorker& w) { write_run_samples(run_outs[i], *w.decoder, shown, cfg.image_tokens()); });
    results.push_back(std::move(r));
  }
  ReportHeader h;
  h.device = pool.describe();
  h.device_note = lavapipe_threads(pool.caps(0));
  if (!h.device_note.empty()) h.extra["device_note"] = h.device_note;
  h.model = catalog.path(frontend::ModelRole::Target);
  h.sampler = ss.str();
  h.image_tokens = cfg.image_tokens();
  h.profile = profile;
  h.workers = pool.size();
  if (!drafter.empty()) h.extra["drafter"] = drafter;
  h.extra["sampler_settings"] = {{"cfg", ss.cfg}, {"temperature", ss.temperature}, {"top_k", ss.top_k}, {"top_p", ss.top_p},
                                 {"entropy_temperature", ss.entropy.on}};
  if (ss.entropy.on) h.extra["sampler_settings"]["entropy_abc"] = {ss.entropy.a, ss.entropy.b, ss.entropy.c};
  h.extra["device_count"] = pool.size();  // --devices: 2 for "0,0"
  h.extra["order"] = interleaved ? "interleaved" : "sequential";
  h.extra["pipelines_first_run_while_timed"] = late_compiles;
  report(results, h, reference, {ap.flag("--precision-recall")}, ap.get("--json"));
  return 0;
}

}  // namespace vkspec::cli
