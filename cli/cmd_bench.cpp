// vkspec bench: every requested method on the same classes and seeds in one process; one table
// (and JSON) of forwards, accepted length, latency, speedup against ar and class accuracy.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/arg_parser.h"
#include "cli/commands.h"
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

struct MethodResult {
  std::string method;
  int64_t images = 0;
  double nfe_mean = 0, accepted_length_mean = 0, latency_median = 0, latency_p90 = 0, tokens_per_s = 0;
  double speedup = 0, class_accuracy = -1;
};

}  // namespace

int cmd_bench(const Args& args) {
  ArgParser ap("bench", {}, {"--methods", "--images", "--json", "--model", "--vq", "--classifier", "--seed", "--cfg",
                             "--temperature", "--top-k", "--top-p"});
  ap.parse(args);
  const std::vector<std::string> methods = split(ap.get_or("--methods", "ar"), ',');
  if (methods.empty()) throw Error("bench: --methods is empty");
  const int64_t images = ap.get_int("--images", 10, 1, 100000);
  const uint64_t seed = static_cast<uint64_t>(ap.get_int("--seed", 0, 0, (1ll << 62)));

  auto ctx = Context::create_default();
  const std::string model_path = ap.get_or("--model", "");
  Gpt gpt(*ctx, model_path.empty() ? shipped_model("fmnist_gpt16.safetensors", "--model") : model_path);
  const GptConfig& cfg = gpt.config();
  SamplerSettings ss = SamplerSettings::from_defaults(cfg.defaults);
  ss.cfg = static_cast<float>(ap.get_double("--cfg", ss.cfg, 0, 100));
  ss.temperature = static_cast<float>(ap.get_double("--temperature", ss.temperature, 1e-6, 100));
  ss.top_k = ap.get_int("--top-k", ss.top_k, 0, 1 << 24);
  ss.top_p = static_cast<float>(ap.get_double("--top-p", ss.top_p, 1e-6, 1));
  const std::string vq_path = ap.get_or("--vq", ""), cls_path = ap.get_or("--classifier", "");
  const int64_t batch = 16;
  VqModel vq(*ctx, vq_path.empty() ? shipped_model("fmnist_vq.safetensors", "--vq") : vq_path, DType::F16, batch,
             cfg.grid_size);
  Classifier classifier(*ctx, cls_path.empty() ? shipped_model("fmnist_classifier.safetensors", "--classifier") : cls_path,
                        batch);

  ModelSet models;
  models.ctx = ctx.get();
  models.target = &gpt;
  const bool tty = isatty(STDERR_FILENO);
  std::vector<MethodResult> results;
  Tensor ids = ctx->tensor(DType::U32, {batch, cfg.image_tokens()}, "bench ids", MemoryUsage::Upload);
  for (const std::string& method : methods) {
    MethodResult r;
    r.method = method;
    r.images = images;
    std::vector<double> lat;
    double nfe = 0, acc_len = 0, tokens = 0, ms = 0;
    int64_t correct = 0;
    std::vector<Generation> pending;
    auto classify = [&] {
      if (pending.empty()) return;
      std::vector<uint32_t> host;
      for (const Generation& g : pending)
        for (int32_t t : g.tokens) host.push_back(static_cast<uint32_t>(t));
      ctx->upload(ids, 0, host.data(), host.size() * 4);
      CommandStream s(*ctx);
      const TensorView px = vq.decode(s, ids, static_cast<int64_t>(pending.size()), cfg.grid_size);
      s.submit_and_wait();
      const ClassifierResult c = classifier.run(px, static_cast<int64_t>(pending.size()));
      for (size_t i = 0; i < pending.size(); ++i) correct += c.predictions[i] == pending[i].class_id;
      pending.clear();
    };
    for (int64_t i = 0; i < images; ++i) {
      StrategyInputs in;
      in.class_id = i % cfg.num_classes;
      in.seed = seed + static_cast<uint64_t>(i);
      in.sampler = ss;
      Generation g = generate_one(method, models, in, false);
      lat.push_back(g.wall_ms);
      nfe += static_cast<double>(g.nfe);
      acc_len += g.accepted_length();
      tokens += static_cast<double>(g.tokens.size());
      ms += g.wall_ms;
      pending.push_back(std::move(g));
      if (static_cast<int64_t>(pending.size()) == batch) classify();
      if (tty)
        std::fprintf(stderr, "\rbench %s: image %lld/%lld   ", method.c_str(), static_cast<long long>(i + 1),
                     static_cast<long long>(images));
    }
    classify();
    r.nfe_mean = nfe / static_cast<double>(images);
    r.accepted_length_mean = acc_len / static_cast<double>(images);
    r.latency_median = percentile(lat, 0.5);
    r.latency_p90 = percentile(lat, 0.9);
    r.tokens_per_s = ms > 0 ? tokens / (ms / 1000.0) : 0;
    r.class_accuracy = static_cast<double>(correct) / static_cast<double>(images);
    results.push_back(r);
  }
  if (tty) std::fprintf(stderr, "\n");
  const MethodResult* ar = nullptr;
  for (const auto& r : results)
    if (r.method == "ar") ar = &r;
  for (auto& r : results) r.speedup = ar && r.latency_median > 0 ? ar->latency_median / r.latency_median : 0;

  std::printf("device: %s\nmodel: %s (%lld tokens per image), %s, %lld images per method\n\n", ctx->caps().name.c_str(),
              gpt.path().c_str(), static_cast<long long>(cfg.image_tokens()), ss.str().c_str(),
              static_cast<long long>(images));
  std::printf("%-10s %8s %9s %12s %10s %8s %9s %9s\n", "method", "NFE", "acc.len", "latency ms", "p90 ms", "speedup",
              "tokens/s", "class acc");
  for (const auto& r : results)
    std::printf("%-10s %8.1f %9.2f %12.1f %10.1f %7.2fx %9.1f %8.1f%%\n", r.method.c_str(), r.nfe_mean,
                r.accepted_length_mean, r.latency_median, r.latency_p90, r.speedup, r.tokens_per_s,
                100.0 * r.class_accuracy);
  if (auto path = ap.get("--json")) {
    nlohmann::json j;
    j["device"] = ctx->caps().name;
    j["model"] = gpt.path();
    j["sampler"] = {{"cfg", ss.cfg}, {"temperature", ss.temperature}, {"top_k", ss.top_k}, {"top_p", ss.top_p}};
    j["results"] = nlohmann::json::array();
    for (const auto& r : results)
      j["results"].push_back({{"method", r.method},
                              {"images", r.images},
                              {"nfe_mean", r.nfe_mean},
                              {"accepted_length_mean", r.accepted_length_mean},
                              {"latency_ms_median", r.latency_median},
                              {"latency_ms_p90", r.latency_p90},
                              {"speedup", r.speedup},
                              {"tokens_per_s", r.tokens_per_s},
                              {"class_accuracy", r.class_accuracy}});
    std::ofstream f(*path);
    if (!f) throw Error("bench: cannot write " + *path);
    f << j.dump(2) << "\n";
  }
  return 0;
}

}  // namespace vkspec::cli
