#include "cli/nfe_projection.h"

#include <algorithm>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "decoding/strategy_registry.h"

namespace vkspec::cli {
namespace {

// Queries per forward of a bench result, or 0 when it has no fixed count (trees, parallel rows,
// islands, a drafter model, heads): what the method's descriptor says of its options.
int64_t queries_per_forward(const nlohmann::json& r) {
  if (r.value("draft_forwards_mean", 0.0) > 0) return 0;
  MethodOptions options;
  for (const auto& [k, v] : r.at("options").items()) options[k] = v.get<std::string>();
  try {
    return find_strategy(r.at("method").get<std::string>()).fixed_queries_for(options);
  } catch (const Error&) {
    return 0;  // a method this build does not have: named in *skipped
  }
}

std::string options_text(const nlohmann::json& o) {
  std::string s;
  for (const auto& [k, v] : o.items()) s += (s.empty() ? "" : " ") + k + "=" + v.get<std::string>();
  return s;
}

}  // namespace

double interpolate_ms(std::vector<ForwardCost> costs, double queries) {
  std::sort(costs.begin(), costs.end(),
            [](const ForwardCost& a, const ForwardCost& b) { return a.queries < b.queries; });
  if (costs.empty() || queries < static_cast<double>(costs.front().queries) ||
      queries > 1.25 * static_cast<double>(costs.back().queries))
    return -1;
  if (costs.size() == 1) return costs[0].ms;
  size_t hi = 1;
  while (hi + 1 < costs.size() && static_cast<double>(costs[hi].queries) < queries) ++hi;
  const ForwardCost &a = costs[hi - 1], &b = costs[hi];
  const double f = (queries - static_cast<double>(a.queries)) / static_cast<double>(b.queries - a.queries);
  const double ms = a.ms + f * (b.ms - a.ms);
  return ms > 0 ? ms : -1;
}

std::vector<ProjectedMethod> project_methods(const std::vector<std::string>& files, int64_t image_tokens,
                                             const std::vector<ForwardCost>& costs, std::vector<std::string>* skipped) {
  std::vector<std::pair<std::string, nlohmann::json>> docs;
  std::map<std::string, double> tokens_of_model;  // model path -> tokens per image
  for (const std::string& f : files) {
    std::ifstream in(f);
    if (!in) throw Error("NFE projection: cannot read " + f);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
      const std::string model = j.at("model").get<std::string>();
      if (j.contains("image_tokens")) tokens_of_model[model] = j["image_tokens"].get<double>();
      for (const auto& r : j.at("results"))
        if (r.at("method") == reference_method_name()) tokens_of_model.emplace(model, r.at("nfe_mean").get<double>());
    } catch (const nlohmann::json::exception& e) {
      throw Error("NFE projection: " + f + " is not a vkspec bench --json file: " + e.what());
    }
    docs.emplace_back(f, std::move(j));
  }
  std::vector<ProjectedMethod> out;
  for (const auto& [file, j] : docs) {
    const std::string model = j["model"].get<std::string>();
    auto tokens = tokens_of_model.find(model);
    if (tokens == tokens_of_model.end())
      throw Error("NFE projection: cannot tell the tokens per image of " + model + " in " + file +
                  " (no image_tokens field and no ar run of that model among the files)");
    for (const auto& r : j["results"]) {
      ProjectedMethod p;
      p.method = r.at("method").get<std::string>();
      p.options = options_text(r.at("options"));
      p.queries = queries_per_forward(r);
      p.ms_per_forward = p.queries ? interpolate_ms(costs, static_cast<double>(p.queries)) : -1;
      if (p.ms_per_forward < 0) {
        const std::string why =
            p.queries ? " (" + std::to_string(p.queries) + " queries: beyond the measured windows)" : "";
        if (skipped) skipped->push_back(p.method + (p.options.empty() ? "" : " " + p.options) + why);
        continue;
      }
      p.source = file;
      p.images = r.at("images").get<int64_t>();
      p.nfe = r.at("nfe_mean").get<double>() * static_cast<double>(image_tokens) / tokens->second;
      p.images_per_s = 1000.0 / (p.nfe * p.ms_per_forward);
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace vkspec::cli
