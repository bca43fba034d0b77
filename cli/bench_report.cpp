#include "cli/bench_report.h"

#include <algorithm>
#include <cstdio>

#include "cli/bench_plan.h"
#include "cli/bench_samples.h"
#include "cli/iteration_table.h"
#include "cli/output_path.h"
#include "cli/quality_table.h"
#include "decoding/strategy_registry.h"

namespace vkspec::cli {
namespace {

nlohmann::json measured(double v) { return v >= 0 ? nlohmann::json(v) : nlohmann::json(nullptr); }

// GPU ms per image of each model (and of sampling), from the steps' timestamps.
nlohmann::json stages_json(const SampleSummary& m) {
  nlohmann::json j;
  for (int k = 0; k < ImageRecord::kStageCount; ++k)
    j[ImageRecord::kStages[k]] = m.stage_ms_mean[static_cast<size_t>(k)];
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
          a.samples.meta.at("classifier") == r.samples.meta.at("classifier") &&
          (!found || a.run.batch < found->run.batch))
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
              "speedup", "latency ms", "p90 ms", "images/s", "NFE", "all fwd", "acc.len", "tokens/s", "class acc",
              "FID", "FID/ar", with_islands ? "  islands" : "");
  for (const auto& r : results) {
    const SampleSummary& m = r.sum;
    std::printf("%-10s %-24s %6lld %7.2fx %11.1f %9.1f %8s %7.1f %8.1f %8.2f %9.1f %9s %7s %7s", r.run.method.c_str(),
                run_options_text(r.run).c_str(), static_cast<long long>(m.images), r.speedup, m.latency_median,
                m.latency_p90, measured_cell(r.images_per_s, "%.3g").c_str(), m.nfe_mean, m.all_forwards_mean(),
                m.accepted_length_mean, m.tokens_per_s,
                m.class_accuracy >= 0 ? (measured_cell(100.0 * m.class_accuracy, "%.1f") + "%").c_str() : "-",
                measured_cell(r.quality.fid.value_or(-1), "%.2f").c_str(),
                measured_cell(r.quality.fid_vs_ar.value_or(-1), "%.2f").c_str());
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
      if (r.memory_known)
        std::printf(" %s %.1f/%.1f;", r.run.method.c_str(), r.memory.rss_mib, r.memory.device_in_use_mib);
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
    nlohmann::json result = {
        {"method", r.run.method},
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
        {"device_mib_after", r.memory_known ? nlohmann::json(r.memory.device_in_use_mib) : nlohmann::json(nullptr)}};
    result.update(quality_json(r.quality));
    result["iterations"] = r.iterations ? iteration_json(*r.iterations) : nlohmann::json(nullptr);
    j["results"].push_back(std::move(result));
  }
  write_json_file(json_path, j, "bench");
}

}  // namespace

std::string measured_cell(double v, const char* fmt) {
  if (v < 0) return "-";
  char b[32];
  std::snprintf(b, sizeof(b), fmt, v);
  return b;
}

void report_runs(std::vector<RunResult>& results, const ReportHeader& h, const ReferenceSet& reference_set,
                 const QualityOptions& quality, const std::optional<std::string>& json_path) {
  const int64_t fewest = assess_runs(results, reference_set, quality);
  print_speed_table(results, h);
  print_overheads(results, h);
  std::printf("speedup: median wall-clock latency of ar (one image per forward) / the method's, same run; images/s: "
              "images generated here per second of the run's wall-clock (batch=B: B images per forward, each "
              "image's latency the batch's); NFE: target forwards; all fwd: every model's forwards\n");
  if (h.workers > 1)
    std::printf("%zu devices at once: each image timed on its own device while the others ran (on a shared one, "
                "every method's latency grows alike)\n",
                h.workers);
  if (fewest && fewest < 1000)
    std::printf("\nFID from %lld images or more per method (quote FID from 1000 or more)\n",
                static_cast<long long>(fewest));
  std::vector<QualityRow> rows;
  for (const auto& r : results)
    rows.push_back({r.run.method, run_options_text(r.run), r.sum.images, r.sum.class_accuracy, r.sum.feature_dim,
                    &r.quality});
  print_quality_table(rows, quality.precision_recall);
  std::vector<IterationRow> iteration_rows;
  for (const auto& r : results)
    if (r.iterations) iteration_rows.push_back({r.run.method, run_options_text(r.run), &*r.iterations});
  print_iteration_table(iteration_rows);
  if (h.profile)
    for (const auto& r : results) print_kernel_table(run_label(r.run), r.kernels);
  if (json_path) write_report_json(results, h, *json_path);
}

}  // namespace vkspec::cli
