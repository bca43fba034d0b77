#include "cli/bench_plan.h"

#include <cstdlib>
#include <filesystem>

#include "cli/method_options.h"
#include "cli/output_path.h"
#include "cli/sharded_images.h"
#include "common/text.h"
#include "decoding/strategy_registry.h"
#include "frontend/method_options_text.h"
#include "frontend/shard_option.h"

namespace vkspec::cli {
namespace {

using Run = frontend::MethodRun;

// --sweep batch=1,4,16: each method that can batch once per batch size, the others at 1.
std::vector<Run> plan_batch_runs(const std::vector<std::string>& methods, const MethodOptions& given,
                                 const std::vector<std::string>& values) {
  std::vector<int64_t> sizes;
  for (const std::string& v : values) {
    char* end = nullptr;
    const long long b = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || b < 1 || b > kMaxBatchRows / 2)
      throw Error("bench: --sweep batch: '" + v + "' is not a batch size in [1, " + std::to_string(kMaxBatchRows / 2) +
                  "]");
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

// --methods: registered names, at least one.
std::vector<std::string> methods_from(const frontend::ArgParser& ap) {
  const std::vector<std::string> methods = split(ap.get_or("--methods", reference_method_name()), ',');
  if (methods.empty()) throw Error("bench: --methods is empty");
  for (const std::string& m : methods) {
    try {
      find_strategy(m);
    } catch (const Error& e) {
      throw Error(std::string("bench: ") + e.what());
    }
  }
  return methods;
}

}  // namespace

BenchPlan plan_bench(const frontend::ArgParser& ap) {
  if (ap.flag("--allow-partial")) throw Error("bench: --allow-partial applies to --report only");
  const std::vector<std::string> methods = methods_from(ap);
  BenchPlan p;
  p.run_images = ap.get_int("--images", 10, 1, 100000);
  p.warmup = ap.get_or("--warmup", "auto") == "auto" ? -1 : ap.get_int("--warmup", 1, 0, 100);
  p.order = ap.get_or("--order", "interleaved");
  if (p.order != "interleaved" && p.order != "sequential")
    throw Error("bench: --order must be interleaved or sequential, got " + p.order);
  p.run_seed = static_cast<uint64_t>(ap.get_int("--seed", 0, 0, (1ll << 62)));
  // --shard: this command makes the seed range [seed, seed + images) of the run's; everything after
  // (sample file, resume, table, outputs) is that of `--seed seed --images images`, and the sample
  // files also record the whole run's seeds so --report can tell what is missing.
  p.shard = frontend::shard_from(ap, p.run_images, "bench");
  const ImageBlock block = shard_block(p.run_images, p.shard);
  p.seed = p.run_seed + static_cast<uint64_t>(block.begin);
  p.images = block.size();
  p.samples_dir = ap.get_or("--samples", "");
  if (!p.samples_dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p.samples_dir, ec))
      throw Error("bench: --samples " + p.samples_dir + " is not a folder (create it first)");
    check_output_path(p.samples_dir + "/x", "--samples");
  }
  p.profile = ap.flag("--profile");
  p.iterations = ap.flag("--iterations");
  const MethodOptions given = given_method_options(ap);
  check_used(given, methods);
  p.runs = plan_runs(methods, given, ap.get_or("--sweep", ""), batch_from(ap, methods, "bench"));
  p.outputs = sample_outputs(ap);
  p.outputs_of_run.resize(p.runs.size());
  if (p.outputs.any())
    for (size_t i = 0; i < p.runs.size(); ++i) p.outputs_of_run[i] = run_outputs(p.outputs, run_file_name(p.runs[i]));
  return p;
}

std::string run_options_text(const Run& run) {
  std::string text = frontend::format_method_options(run.options);
  if (run.batch > 1) text += (text.empty() ? "" : ",") + std::string("batch=") + std::to_string(run.batch);
  return text;
}

std::string run_label(const Run& run) {
  const std::string options = run_options_text(run);
  return run.method + (options.empty() ? "" : " " + options);
}

std::string run_file_name(const Run& run) {
  std::string name = run.method;
  for (const auto& [k, v] : run.options) name += "_" + k + "=" + v;
  if (run.batch > 1) name += "_batch=" + std::to_string(run.batch);
  for (char& c : name)
    if (c == '/' || c == ' ') c = '%';
  return name;
}

}  // namespace vkspec::cli
