#include "cli/bench_report_files.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/bench_plan.h"
#include "cli/bench_report.h"
#include "cli/bench_samples.h"
#include "cli/sample_outputs.h"
#include "cli/token_images.h"
#include "common/text.h"
#include "eval/fashion_mnist.h"
#include "eval/image_judge.h"
#include "eval/sample_completeness.h"
#include "frontend/device_choice.h"
#include "frontend/method_options_text.h"
#include "frontend/model_loading.h"

namespace vkspec::cli {
namespace {

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
    missing += (missing.empty() ? " " : "\n  ") + g.meta.at("method") + (opts.empty() ? "" : " " + opts) + ": " +
               std::to_string(c.missing) + " of " + std::to_string(c.expected) + " images missing, seeds " +
               c.missing_seeds + "; run again: " + rerun;
  }
  if (missing.empty()) return;
  const std::string how = "\n(the same bench command with the same --samples folder resumes a shard where it stopped)";
  if (!allow_partial)
    throw Error("bench --report: incomplete:" + missing + how + "; --allow-partial reports what there is");
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
    if (recorded != model_identity(vq))
      throw Error("bench --report: " + run_label(r.run) + " was decoded by " + recorded + ", --vq is " +
                  model_identity(vq) + " (give the tokenizer of the samples)");
  }
  int64_t grid = 1;
  while (grid * grid < tokens_per_image) ++grid;
  if (grid * grid != tokens_per_image)
    throw Error("bench --report: " + std::to_string(tokens_per_image) + " tokens per image is not a square grid");
  auto ctx = frontend::open_device();
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(*ctx, vq, DType::F16, ImageJudge::kBatch, grid);
  TokenImages decoder(*ctx, *tokenizer, grid, ImageJudge::kBatch);
  for (const auto& r : results)
    write_run_samples(run_outputs(outputs, run_file_name(r.run)), decoder, r.samples, tokens_per_image);
}

}  // namespace

int report_sample_files(const frontend::ArgParser& ap) {
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
    tokens_per_image =
        std::max<int64_t>(tokens_per_image, g.images.empty() ? 0 : static_cast<int64_t>(g.images[0].tokens.size()));
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
    if (model_identity(cls) != judged_by)
      throw Error("bench --report: the samples were judged by " + judged_by + ", --classifier is " +
                  model_identity(cls) + " (give the classifier that judged them, or --dataset none)");
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
  report_runs(results, h, reference, {ap.flag("--precision-recall")}, ap.get("--json"));
  return 0;
}

}  // namespace vkspec::cli
