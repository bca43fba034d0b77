#include "decoding/strategy.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "decoding/ar_strategy.h"
#include "decoding/hawk_strategy.h"
#include "decoding/lantern_strategy.h"
#include "decoding/mulo_strategy.h"
#include "decoding/scd_strategy.h"
#include "decoding/sd_strategy.h"
#include "decoding/sjd_strategy.h"
#include "decoding/ssd_strategy.h"
#include "decoding/zipar_strategy.h"
#include "decoding/zipar_verify_strategy.h"
#include "common/error.h"

namespace vkspec {
namespace {

std::string short_number(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%g", v);
  return b;
}

}  // namespace

Strategy::Strategy(const ModelSet& models, const StrategyInputs& in) : models_(models), in_(in) {
  if (!models.ctx || !models.target) throw Error("a strategy needs a context and a target model");
  const GptConfig& cfg = models.target->config();
  if (in.class_id < 0 || in.class_id >= cfg.num_classes)
    throw Error("class " + std::to_string(in.class_id) + " out of range: the model has classes 0.." +
                std::to_string(cfg.num_classes - 1));
  in.sampler.validate();
  grid_.assign(static_cast<size_t>(cfg.image_tokens()), kUndecided);
}

void Strategy::finish_event(StepEvent& e) {
  e.step = step_++;
  e.grid = grid_;
  e.committed = committed_;
  e.nfe = nfe_;
  e.draft_forwards = draft_forwards_;
  e.done = done();
}

std::vector<std::string> strategy_names() { return {"ar", "sjd", "scd-mc", "scd-gs", "sd", "lantern", "zipar", "mulo", "hawk", "ssd"}; }

std::vector<std::string> strategy_options(const std::string& method) {
  if (method == "sjd" || method == "scd-mc" || method == "scd-gs") return {"window", "init", "accept", "k", "delta"};
  if (method == "sd") return {"window", "accept", "k", "delta"};
  if (method == "lantern") return {"window", "init", "k", "delta", "drafter"};
  if (method == "zipar") return {"window", "verify", "k", "delta"};
  if (method == "mulo") return {"tau", "k", "radius", "band", "islands", "resample"};
  if (method == "hawk") return {"depth"};
  if (method == "ssd") return {"rows", "rounds"};
  return {};
}

StrategyNeeds strategy_needs(const std::string& method, const MethodOptions& options) {
  StrategyNeeds n;
  auto it = options.find("accept");
  n.neighbours = it != options.end() && it->second == "lantern";
  if (method == "zipar") {
    auto v = options.find("verify");
    n.neighbours = v != options.end() && v->second == "lantern";
  }
  if (method == "sd") n.drafter = true;
  if (method == "mulo") {
    n.low_res = n.vq = n.neighbours = true;
  }
  if (method == "hawk" || method == "ssd") n.heads = true;
  if (auto init = options.find("init"); init != options.end() && init->second == "heads") n.heads = true;
  if (method == "lantern") {
    n.neighbours = true;
    n.drafter = lantern_uses_drafter_model(options);
  }
  return n;
}

int64_t strategy_max_queries(const std::string& method, const MethodOptions& o, const GptConfig& target) {
  auto get = [&](const char* key, int64_t fallback) {
    try {
      return option_int(o, method, key, fallback, 1, 1 << 20);
    } catch (const Error&) {
      return fallback;
    }
  };
  const int64_t W = target.grid_size;
  if (method == "sjd" || method == "scd-mc" || method == "scd-gs" || method == "lantern") return get("window", 16) + 1;
  if (method == "sd") return get("window", 4) + 1;
  if (method == "zipar") {
    auto v = o.find("verify");
    return v != o.end() && v->second != "none" ? ZipArVerifyStrategy::max_queries(W) : W + 1;
  }
  if (method == "mulo") return mulo_max_queries(get("band", 1), W);
  if (method == "hawk") return hawk_max_queries();
  if (method == "ssd") return get("rows", 2) * W + 1;
  return 1;
}

std::unique_ptr<Strategy> make_strategy(const std::string& method, const ModelSet& models, const StrategyInputs& in) {
  if (method == "ar") return std::make_unique<ArStrategy>(models, in);
  if (method == "sjd") return std::make_unique<SjdStrategy>(models, in);
  if (method == "scd-mc" || method == "scd-gs") return std::make_unique<ScdStrategy>(method, models, in);
  if (method == "sd") return std::make_unique<SdStrategy>(models, in);
  if (method == "lantern") return make_lantern(models, in);
  if (method == "zipar") {
    auto v = in.options.find("verify");
    if (v != in.options.end() && v->second != "none") return std::make_unique<ZipArVerifyStrategy>(models, in);
    if (in.options.count("k") || in.options.count("delta"))
      throw Error("zipar: --k and --delta belong to --verify lantern");
    return std::make_unique<ZipArStrategy>(models, in);
  }
  if (method == "mulo") return std::make_unique<MuloStrategy>(models, in);
  if (method == "hawk") return std::make_unique<HawkStrategy>(models, in);
  if (method == "ssd") return std::make_unique<SsdStrategy>(models, in);
  std::string known;
  for (const auto& n : strategy_names()) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown method '" + method + "' (known: " + known + ")");
}

void check_options(const MethodOptions& o, const std::string& method, const std::vector<std::string>& known) {
  for (const auto& [k, v] : o)
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", --") + n;
      throw Error("method " + method + " has no option --" + k + (known.empty() ? "" : " (options: --" + list + ")"));
    }
}

int64_t option_int(const MethodOptions& o, const std::string& method, const std::string& key, int64_t fallback,
                   int64_t lo, int64_t hi) {
  auto it = o.find(key);
  if (it == o.end()) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end || errno == ERANGE)
    throw Error(method + ": --" + key + " expects an integer, got '" + it->second + "'");
  if (v < lo || v > hi)
    throw Error(method + ": --" + key + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                it->second);
  return v;
}

double option_double(const MethodOptions& o, const std::string& method, const std::string& key, double fallback,
                     double lo, double hi) {
  auto it = o.find(key);
  if (it == o.end()) return fallback;
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end || !std::isfinite(v))
    throw Error(method + ": --" + key + " expects a finite number, got '" + it->second + "'");
  if (v < lo || v > hi)
    throw Error(method + ": --" + key + " must be in [" + short_number(lo) + ", " + short_number(hi) + "], got " +
                it->second);
  return v;
}

std::string option_choice(const MethodOptions& o, const std::string& method, const std::string& key,
                          const std::string& fallback, const std::vector<std::string>& choices) {
  auto it = o.find(key);
  if (it == o.end()) return fallback;
  if (std::find(choices.begin(), choices.end(), it->second) == choices.end()) {
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    throw Error(method + ": --" + key + " must be one of " + list + ", got '" + it->second + "'");
  }
  return it->second;
}

}  // namespace vkspec
