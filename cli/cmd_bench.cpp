// vkspec bench: every requested method on the same classes and seeds in one process; one table
// (and JSON) of forwards, accepted length, latency, speedup against ar and class accuracy.
// Method options (--window, --init, ...) go to the methods that know them; --sweep KEY=V1,V2,...
// repeats each method that knows KEY once per value.
#include <algorithm>
#include <cstdio>
#include <fstream>
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
#include "decoding/generation.h"
#include "engine/model/classifier.h"
#include "engine/model/vq_model.h"

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
  double tokens_per_s = 0, speedup = 0, class_accuracy = -1;  // -1: not measured
};

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

// Decodes and classifies generated images in batches (class accuracy).
class Judge {
 public:
  static constexpr int64_t kBatch = 16;
  Judge(Context& ctx, const GptConfig& cfg, VqModel& vq, const std::string& cls_path)
      : ctx_(ctx),
        cfg_(cfg),
        vq_(vq),
        classifier_(ctx, cls_path, kBatch),
        ids_(ctx.tensor(DType::U32, {kBatch, cfg.image_tokens()}, "bench ids", MemoryUsage::Upload)) {}

  void add(const Generation& g) {
    pending_.push_back(g);
    if (static_cast<int64_t>(pending_.size()) == kBatch) flush();
  }
  // Fraction of the images added since the last call that were classified as their class.
  double take_accuracy() {
    flush();
    const double a = seen_ ? static_cast<double>(correct_) / static_cast<double>(seen_) : 0.0;
    correct_ = seen_ = 0;
    return a;
  }

 private:
  void flush() {
    if (pending_.empty()) return;
    std::vector<uint32_t> host;
    for (const Generation& g : pending_)
      for (int32_t t : g.tokens) host.push_back(static_cast<uint32_t>(t));
    ctx_.upload(ids_, 0, host.data(), host.size() * 4);
    CommandStream s(ctx_);
    const TensorView px = vq_.decode(s, ids_, static_cast<int64_t>(pending_.size()), cfg_.grid_size);
    s.submit_and_wait();
    const ClassifierResult c = classifier_.run(px, static_cast<int64_t>(pending_.size()));
    for (size_t i = 0; i < pending_.size(); ++i) correct_ += c.predictions[i] == pending_[i].class_id;
    seen_ += static_cast<int64_t>(pending_.size());
    pending_.clear();
  }

  Context& ctx_;
  const GptConfig& cfg_;
  VqModel& vq_;
  Classifier classifier_;
  Tensor ids_;
  std::vector<Generation> pending_;
  int64_t correct_ = 0, seen_ = 0;
};

}  // namespace

int cmd_bench(const Args& args) {
  std::set<std::string> known = {"--methods", "--images", "--json", "--classifier", "--seed", "--sweep", "--warmup"};
  for (const std::string& f : model_flags()) known.insert(f);
  for (const std::string& f : method_option_flags()) known.insert(f);
  ArgParser ap("bench", {}, known);
  ap.parse(args);
  const std::vector<std::string> methods = split(ap.get_or("--methods", "ar"), ',');
  if (methods.empty()) throw Error("bench: --methods is empty");
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
  const MethodOptions given = given_method_options(ap);
  check_used(given, methods);
  const std::vector<Run> runs = plan_runs(methods, given, ap.get_or("--sweep", ""));

  auto ctx = Context::create_default();
  // --classifier none: no class accuracy (and no tokenizer needed), e.g. for untrained models.
  const std::string cls_path = ap.get_or("--classifier", "");
  const LoadedModels loaded = load_models(*ctx, ap, runs, cls_path != "none", Judge::kBatch);
  const Gpt& gpt = *loaded.target;
  const GptConfig& cfg = gpt.config();
  const SamplerSettings ss = sampler_settings(ap, cfg);
  std::unique_ptr<Judge> judge;
  if (cls_path != "none")
    judge = std::make_unique<Judge>(*ctx, cfg, *loaded.vq,
                                    cls_path.empty() ? shipped_model("fmnist_classifier.safetensors", "--classifier")
                                                     : cls_path);
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
      return in;
    };
    // Untimed images first: pipelines are compiled on first use.
    for (int64_t i = 0; i < warmup; ++i) generate_one(run.method, models, inputs(images + i), false);
    RunResult r;
    r.run = run;
    r.images = images;
    std::vector<double> lat;
    double nfe = 0, drafts = 0, acc_len = 0, tokens = 0, ms = 0;
    for (int64_t i = 0; i < images; ++i) {
      Generation g = generate_one(run.method, models, inputs(i), false);
      lat.push_back(g.wall_ms);
      nfe += static_cast<double>(g.nfe);
      drafts += static_cast<double>(g.draft_forwards);
      acc_len += g.accepted_length();
      tokens += static_cast<double>(g.tokens.size());
      ms += g.wall_ms;
      if (judge) judge->add(g);
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
    if (judge) r.class_accuracy = judge->take_accuracy();
    results.push_back(r);
  }
  if (tty) std::fprintf(stderr, "\n");
  const RunResult* ar = nullptr;
  for (const auto& r : results)
    if (r.run.method == "ar") ar = &r;
  for (auto& r : results) r.speedup = ar && r.latency_median > 0 ? ar->latency_median / r.latency_median : 0;

  std::printf("device: %s\nmodel: %s (%lld tokens per image), %s, %lld images per method\n\n", ctx->caps().name.c_str(),
              gpt.path().c_str(), static_cast<long long>(cfg.image_tokens()), ss.str().c_str(),
              static_cast<long long>(images));
  std::printf("%-10s %-18s %8s %8s %9s %12s %10s %8s %9s %9s\n", "method", "options", "NFE", "drafts", "acc.len",
              "latency ms", "p90 ms", "speedup", "tokens/s", "class acc");
  for (const auto& r : results) {
    char acc[32] = "-";
    if (r.class_accuracy >= 0) std::snprintf(acc, sizeof(acc), "%.1f%%", 100.0 * r.class_accuracy);
    std::printf("%-10s %-18s %8.1f %8.1f %9.2f %12.1f %10.1f %7.2fx %9.1f %9s\n", r.run.method.c_str(),
                options_str(r.run.options).c_str(), r.nfe_mean, r.draft_forwards_mean, r.accepted_length_mean,
                r.latency_median, r.latency_p90, r.speedup, r.tokens_per_s, acc);
  }
  if (auto path = ap.get("--json")) {
    nlohmann::json j;
    j["device"] = ctx->caps().name;
    j["model"] = gpt.path();
    if (loaded.drafter) j["drafter"] = loaded.drafter->path();
    j["sampler"] = {{"cfg", ss.cfg}, {"temperature", ss.temperature}, {"top_k", ss.top_k}, {"top_p", ss.top_p}};
    j["results"] = nlohmann::json::array();
    for (const auto& r : results)
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
                              {"class_accuracy", r.class_accuracy >= 0 ? nlohmann::json(r.class_accuracy)
                                                                       : nlohmann::json(nullptr)}});
    std::ofstream f(*path);
    if (!f) throw Error("bench: cannot write " + *path);
    f << j.dump(2) << "\n";
  }
  return 0;
}

}  // namespace vkspec::cli
