// vkspec bench-text-encoder: the T5 encoder's time for one prompt (LlamaGen's text-to-image
// condition; issue 47), a converted file or a generated one of a released shape, next to what it
// streams and computes, so the prompt's cost can be set against the image it conditions.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output_path.h"
#include "cli/run_info.h"
#include "common/error.h"
#include "engine/model/synthetic_t5.h"
#include "engine/model/t5_encoder.h"
#include "engine/ops/biased_attention.h"
#include "frontend/arg_parser.h"
#include "frontend/device_choice.h"

namespace vkspec::cli {
namespace {

std::unique_ptr<T5Encoder> load_encoder(Context& ctx, const frontend::ArgParser& ap, std::string* label) {
  const auto model = ap.get("--model"), shape = ap.get("--synthetic");
  if (model.has_value() == shape.has_value())
    throw Error("bench-text-encoder: give --model FILE (convert_t5.py's) or --synthetic SHAPE");
  if (model) {
    *label = *model;
    return std::make_unique<T5Encoder>(ctx, *model);
  }
  *label = "synthetic " + *shape;
  try {
    return std::make_unique<T5Encoder>(ctx, SafetensorsFile(*label, synthetic_t5(*shape, 0).take_bytes()));
  } catch (const std::bad_alloc&) {
    throw Error(*label + ": out of host memory generating its weights");
  }
}

// Median wall time of `repeat` encodes of `tokens` ids (a prompt of that many, no padding).
double median_encode_ms(T5Encoder& enc, int64_t tokens, int repeat) {
  std::vector<int32_t> ids(static_cast<size_t>(tokens));
  for (int64_t i = 0; i < tokens; ++i)
    ids[static_cast<size_t>(i)] = static_cast<int32_t>((i * 37 + 5) % enc.config().vocab);
  const std::vector<uint8_t> mask(ids.size(), 1);
  enc.encode(ids, mask);  // the pipelines' first runs (lavapipe compiles then)
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    enc.encode(ids, mask);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

frontend::OptionTable bench_text_encoder_options() {
  std::string shapes;
  for (const std::string& s : synthetic_t5_shapes()) shapes += (shapes.empty() ? "" : ", ") + s;
  return {{"--model", "FILE", "a T5 encoder converted by tools/convert_t5.py"},
          {"--synthetic", "SHAPE", "a generated encoder of a released shape (" + shapes + ")"},
          {"--tokens", "N", "prompt length in tokens (default 120, LlamaGen's)"},
          {"--repeat", "N", "encodes timed, the median is shown (default 5)"},
          {"--json", "FILE", "also write the result as JSON"}};
}

int cmd_bench_text_encoder(const Args& args) {
  frontend::ArgParser ap("bench-text-encoder", bench_text_encoder_options());
  ap.parse(args);
  const int64_t tokens = ap.get_int("--tokens", 120, 1, ops::kBiasedAttentionMaxTokens);
  const int repeat = static_cast<int>(ap.get_int("--repeat", 5, 1, 1000));
  const auto json_path = ap.get("--json");
  if (json_path) check_output_path(*json_path, "--json");
  auto ctx = frontend::open_device();
  std::string label;
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<T5Encoder> enc = load_encoder(*ctx, ap, &label);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double ms = median_encode_ms(*enc, tokens, repeat);
  const T5Config& c = enc->config();
  const double params = static_cast<double>(enc->matrix_params());
  const double flop =
      2.0 * params * static_cast<double>(tokens) + 4.0 * static_cast<double>(c.n_layer * c.inner() * tokens * tokens);
  std::printf("%s on %s: %lld layers x %lld, %.0fM matrix weights, loaded in %.1f s\n", label.c_str(),
              ctx->caps().name.c_str(), static_cast<long long>(c.n_layer), static_cast<long long>(c.d_model),
              params / 1e6, load_s);
  std::printf("encode %lld tokens: %.2f ms (median of %d), %.1f GFLOP/s, weights %.1f GB/s (f16)\n",
              static_cast<long long>(tokens), ms, repeat, flop / (ms * 1e6), 2.0 * params / (ms * 1e6));
  if (json_path) {
    nlohmann::json out = run_info(*ctx);
    out["model"] = label;
    out["tokens"] = tokens;
    out["repeat"] = repeat;
    out["encode_ms"] = ms;
    out["gflop"] = flop / 1e9;
    out["matrix_params"] = params;
    std::ofstream(*json_path) << out.dump(1) << "\n";
  }
  return 0;
}

}  // namespace vkspec::cli
