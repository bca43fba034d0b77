#include "cli/bench_samples.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cli/bench_plan.h"
#include "decoding/strategy_registry.h"
#include "frontend/method_options_text.h"

namespace vkspec::cli {

const std::string& model_identity(const std::string& path) {
  static std::map<std::string, std::string> known;
  auto it = known.find(path);
  if (it == known.end()) it = known.emplace(path, file_identity(path)).first;
  return it->second;
}

std::map<std::string, std::string> run_meta(const frontend::MethodRun& run, const frontend::LoadedModels& loaded,
                                            const SamplerSettings& ss, const std::string& classifier,
                                            const std::string& devices, const std::string& rounding) {
  const StrategyNeeds needs = find_strategy(run.method).needs_for(run.options);
  std::string models = "target=" + model_identity(loaded.target->path());
  if (needs.drafter && loaded.drafter) models += ";drafter=" + model_identity(loaded.drafter->path());
  if (needs.low_res && loaded.low_res) models += ";low_res=" + model_identity(loaded.low_res->path());
  if (needs.heads && loaded.heads) models += ";heads=" + model_identity(loaded.heads->path());
  if (needs.latent_heads && loaded.latent_heads)
    models += ";latent_heads=" + model_identity(loaded.latent_heads->path());
  if (needs.eagle && loaded.eagle) models += ";eagle=" + model_identity(loaded.eagle->path());
  if (needs.sr_net && loaded.sr_net) models += ";sr_net=" + model_identity(loaded.sr_net->path());
  if (needs.latent_upsampler && loaded.latent_upsampler)
    models += ";latent_upsampler=" + model_identity(loaded.latent_upsampler->path());
  if (needs.flashar && loaded.flashar) models += ";flashar=" + model_identity(loaded.flashar->path());
  // The tokenizer draws the judged images (and drafts MuLo-SD's and LANTERN's neighbours); its
  // key stays "vq" so that sample files written before still resume.
  if (loaded.tokenizer && (!classifier.empty() || needs.tokenizer || needs.neighbours))
    models += ";vq=" + model_identity(loaded.tokenizer->path());
  // The neighbour table is the codebook's (vq) under a metric: another metric is another table.
  // Absent means l2, the only metric before 2026-11-26, so those sample files still resume.
  if (needs.neighbours && needs.neighbour_metric != NeighbourMetric::L2)
    models += std::string(";neighbours=") + neighbour_metric_name(needs.neighbour_metric);
  std::map<std::string, std::string> meta = {{"method", run.method},
                                             {"options", frontend::format_method_options(run.options)},
                                             {"models", models},
                                             {"sampler", ss.str()},
                                             {"classifier", classifier.empty() ? "none" : model_identity(classifier)},
                                             {"device", devices}};
  // Absent where the kernels round as before the key existed, so those files still resume.
  if (!rounding.empty()) meta["rounding"] = rounding;
  // The tokens are batch 1's; the timings are not, so a batch's images are a run of their own.
  if (run.batch > 1) meta["batch"] = std::to_string(run.batch);
  return meta;
}

std::string target_of(const SampleSet& s) {
  const std::string& m = s.meta.at("models");
  const std::string first = m.substr(0, m.find(';'));  // "target=NAME#HASH"
  return first.substr(first.find('=') + 1);
}

std::string samples_file(const std::string& dir, const frontend::MethodRun& run, uint64_t seed) {
  return dir + "/" + run_file_name(run) + "_seed" + std::to_string(seed) + ".safetensors";
}

void write_run_samples(const SampleOutputs& where, TokenImages& decoder, const SampleSet& shown, int64_t tokens) {
  std::vector<SampleId> ids;
  for (const ImageRecord& im : shown.images) ids.push_back({im.seed, im.class_id, &im.tokens});
  std::sort(ids.begin(), ids.end(), [](const SampleId& a, const SampleId& b) { return a.seed < b.seed; });
  write_samples(where, decoder, ids, tokens);
  for (const std::string& f : {where.npz, where.out_dir})
    if (!f.empty()) std::fprintf(stderr, "bench: wrote %zu images to %s\n", ids.size(), f.c_str());
}

}  // namespace vkspec::cli
