// vkspec generate: sample images with a decoding method, write a PNG (a grid for several images)
// and optionally a trace JSON of every step; --shard I/N makes one share of the images, numbered
// (seeds, classes) as in the one-process run; --devices spreads the images over several devices
// (cli/device_pool.h), the outputs the same image for image.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/device_pool.h"
#include "cli/method_options.h"
#include "cli/output_path.h"
#include "cli/progress.h"
#include "cli/sample_outputs.h"
#include "cli/sharded_images.h"
#include "cli/token_images.h"
#include "decoding/generation.h"
#include "decoding/trace.h"
#include "engine/image/image.h"
#include "engine/model/tokenizer.h"
#include "frontend/arg_parser.h"
#include "frontend/method_options_text.h"
#include "frontend/model_loading.h"
#include "frontend/sampler_options.h"
#include "frontend/shard_option.h"

namespace vkspec::cli {

std::vector<OptionSection> generate_sections() {
  std::vector<OptionSection> s = {
      {"",
       "",
       {{"--method", "M", "the decoding method (default ar; vkspec methods lists them)"},
        {"--images", "N", "how many images (default 1; with --shard, of all shards together)"},
        {"--seed", "S", "seed of the first image; image i has seed S + i (default 0)"},
        {"--class", "N", "every image's class (default: image i has class i mod the classes)"},
        {"--caption-embeddings", "FILE", "a text-to-image model's condition (.npy or .safetensors) instead of --class"},
        {"--prompt", "TEXT", "a prompt-driven model's condition (Janus-Pro), every image's, instead of --class"},
        {"--out", "FILE", "the PNG of all images as a grid (default out.png, none with --npz or --out-dir alone)"},
        {"--scale", "F", "the grid's pixels are F x F screen pixels (default 4)"},
        {"--columns", "C", "images per row of the grid (default: up to 10)"},
        {"--trace", "FILE", "every step of every image as JSON (what vkspec-viewer replays)"},
        frontend::shard_option()}}};
  frontend::append_options(s[0].options, sample_output_options(false));
  frontend::append_options(s[0].options, device_pool_options());
  frontend::append_options(s[0].options, batch_options());
  for (OptionSection& shared : run_option_sections()) s.push_back(std::move(shared));
  return s;
}

namespace {

// The images decoded on worker 0 (in batches the tokenizer was sized for) into --npz, --out-dir
// and the --out grid.
void write_images(DevicePool& pool, const std::vector<Generation>& gens, const SampleOutputs& outputs,
                  const std::string& out, int scale, int columns, const GptConfig& cfg) {
  std::vector<SampleId> ids;
  for (const Generation& g : gens) ids.push_back({g.seed, g.class_id, &g.tokens});
  const int64_t images = static_cast<int64_t>(gens.size());
  std::vector<Image> pictures;
  pool.submit<ModelWorker>(0,
                           [&](Context& ctx, ModelWorker& w) {
                             TokenImages decoder(ctx, *w.loaded.tokenizer, cfg.grid_size,
                                                 std::min<int64_t>(images, 16));
                             write_samples(outputs, decoder, ids, cfg.image_tokens(), [&](const Image& im) {
                               if (!out.empty()) pictures.push_back(im.scaled(scale));
                             });
                           })
      .get();
  if (!out.empty()) make_grid(pictures, columns).write_png(out);
}

// Image k of the run (block.begin <= k < block.end): seed seed + k, the caption, else class `cls`
// (-1: k mod the classes).
std::vector<StrategyInputs> image_inputs(const ImageBlock& block, uint64_t seed,
                                         const std::shared_ptr<const Condition>& caption, int64_t cls, int64_t classes,
                                         const SamplerSettings& ss, const MethodOptions& options) {
  std::vector<StrategyInputs> inputs;
  for (int64_t k = block.begin; k < block.end; ++k) {
    StrategyInputs in;
    in.condition = caption ? caption : std::make_shared<ClassLabel>(cls >= 0 ? cls : k % classes);
    in.seed = seed + static_cast<uint64_t>(k);
    in.sampler = ss;
    in.options = options;
    inputs.push_back(std::move(in));
  }
  return inputs;
}

// What a generate run was, for its summary line.
struct RunSummary {
  std::string method;
  MethodOptions options;
  SamplerSettings ss;
  int64_t batch = 1;  // images per forward
  ImageBlock block;   // this process's images of the run's run_images (--shard)
  int64_t run_images = 0;
  double seconds = 0;  // wall time of the decoding
  std::string devices;
};

// The one line generate prints: what was written (files: the outputs, an empty name where not
// asked for), the run, forwards, latency and images/s.
void print_summary(const frontend::ArgParser& ap, const std::vector<Generation>& gens,
                   const std::vector<std::string>& files, const RunSummary& r) {
  const int64_t images = static_cast<int64_t>(gens.size());
  double nfe = 0, ms = 0;
  for (const auto& g : gens) nfe += static_cast<double>(g.nfe), ms += g.wall_ms;
  const std::string opts = frontend::format_method_options(r.options);
  std::string written;
  for (const std::string& f : files)
    if (!f.empty()) written += (written.empty() ? "" : ", ") + f;
  const std::string share = images == r.run_images
                                ? ""
                                : " (images " + std::to_string(r.block.begin) + ".." + std::to_string(r.block.end - 1) +
                                      " of " + std::to_string(r.run_images) + ", --shard " + *ap.get("--shard") + ")";
  const std::string batched = r.batch > 1 ? ", " + std::to_string(r.batch) + " images per forward" : "";
  std::printf(
      "wrote %s: %lld image(s)%s, method %s%s, %s%s, mean %.1f forwards and %.0f ms per image, %.3g images/s on %s\n",
      written.c_str(), static_cast<long long>(images), share.c_str(), r.method.c_str(),
      opts.empty() ? "" : (" (" + opts + ")").c_str(), r.ss.str().c_str(), batched.c_str(), nfe / images, ms / images,
      static_cast<double>(images) / r.seconds, r.devices.c_str());
}

// --caption-embeddings or --prompt: every image's condition (none without either: classes). A
// prompt goes through the target's own tokenizer and embeddings, so it is made once the model is
// loaded (on worker 0; the condition holds host values every device uploads).
std::shared_ptr<const Condition> caption_from(const frontend::ArgParser& ap, DevicePool& pool) {
  const auto file = ap.get("--caption-embeddings");
  const auto prompt = ap.get("--prompt");
  if (!file && !prompt) return nullptr;
  if (file && prompt) throw Error("generate: --prompt and --caption-embeddings exclude each other");
  if (ap.get("--class"))
    throw Error(std::string("generate: --class and ") + (file ? "--caption-embeddings" : "--prompt") +
                " exclude each other");
  if (file) return std::make_shared<CaptionEmbeddings>(CaptionEmbeddings::load(*file));
  return pool
      .submit<ModelWorker>(0, [&](Context&, ModelWorker& w) { return w.loaded.target->prompt_condition(*prompt); })
      .get();
}

}  // namespace

int cmd_generate(const Args& args) {
  frontend::ArgParser ap("generate", all_options(generate_sections()));
  ap.parse(args);
  const std::string method = ap.get_or("--method", reference_method_name());
  const MethodOptions given = given_method_options(ap);
  check_used(given, {method});
  const MethodOptions method_options = options_for(method, given);
  const int64_t run_images = ap.get_int("--images", 1, 1, 10000000);
  const int64_t batch = batch_from(ap, {method}, "generate");
  const uint64_t seed = static_cast<uint64_t>(ap.get_int("--seed", 0, 0, (1ll << 62)));
  // --shard: this process makes images [block.begin, block.end) of the run, numbered as in the run.
  const ImageBlock block = shard_block(run_images, frontend::shard_from(ap, run_images, "generate"));
  const int64_t images = block.size();
  // Every image (and its trace) is kept until the end: a share beyond that is bench's job.
  if (images > 10000)
    throw Error("generate: " + std::to_string(images) +
                " images in one process (at most 10000; split them with "
                "--shard, or use vkspec bench --samples, which keeps only records)");
  const int scale = static_cast<int>(ap.get_int("--scale", 4, 1, 32));
  const int columns = static_cast<int>(ap.get_int("--columns", std::min<int64_t>(images, 10), 1, 1000));
  const SampleOutputs outputs = sample_outputs(ap);
  // The grid is for looking at; with only evaluation outputs asked for, none.
  const std::string out = ap.get_or("--out", outputs.any() ? "" : "out.png");
  if (!out.empty()) check_output_path(out, "--out");
  if (auto trace = ap.get("--trace")) check_output_path(*trace, "--trace");

  // One worker per --devices entry, each with its own copy of the models; worker 0 also decodes.
  auto instance = std::make_shared<Instance>();
  const std::vector<uint32_t> devices = device_list(ap.get("--devices"), *instance);
  const frontend::ModelCatalog catalog(frontend::model_files(ap, ap.get("--prompt").has_value()));
  frontend::ModelRequest request = frontend::request_for(catalog, {{method, method_options}});
  request.batch = batch;
  DevicePool pool(instance, devices, ContextOptions::from_environment(), [&](Context& ctx, size_t worker) {
    auto w = std::make_unique<ModelWorker>();
    frontend::ModelRequest r = request;
    r.tokenizer = worker == 0;
    r.tokenizer_batch = std::min<int64_t>(images, 16);
    w->loaded = frontend::load_models(ctx, catalog, r);
    w->models = w->loaded.set(ctx);
    return w;
  });
  const GptConfig cfg =
      pool.submit<ModelWorker>(0, [](Context&, ModelWorker& w) { return w.loaded.target->config(); }).get();
  const std::shared_ptr<const Condition> caption = caption_from(ap, pool);
  const std::string model_path = catalog.path(frontend::ModelRole::Target);
  const SamplerSettings ss = frontend::sampler_overrides(ap).applied_to(SamplerSettings::from_defaults(cfg.defaults));
  if (caption) caption->check(cfg);
  if (!caption && cfg.num_classes < 1)
    throw Error("generate: " + model_path + " (" + cfg.family + ") takes " +
                (cfg.input == ConditionInput::Prompt ? "a prompt: give --prompt TEXT"
                                                     : "captions: give --caption-embeddings FILE, or --prompt "
                                                       "TEXT where it names its text encoder"));
  const bool fixed_class = ap.get("--class").has_value();
  const int64_t cls = caption ? 0 : ap.get_int("--class", 0, 0, cfg.num_classes - 1);
  Progress progress("generate " + method, images);
  ShardedRun run;
  run.method = method;
  run.keep_events = !ap.get_or("--trace", "").empty();
  run.batch = batch;
  run.inputs = image_inputs(block, seed, caption, fixed_class ? cls : -1, cfg.num_classes, ss, method_options);
  const int64_t image_tokens = cfg.image_tokens();
  run.on_event = [&](size_t k, const StepEvent& e) {
    progress.note("image " + std::to_string(k + 1) + ": " + std::to_string(e.committed) + "/" +
                  std::to_string(image_tokens) + " tokens, " + std::to_string(e.nfe) + " forwards");
  };
  run.on_finished = [&](size_t) { progress.image_done(); };
  std::vector<Generation> gens;
  const auto started = std::chrono::steady_clock::now();
  generate_sharded(pool, run, [&](size_t, ShardedImage&& im) { gens.push_back(std::move(im.generation)); });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  progress.finish();

  write_images(pool, gens, outputs, out, scale, columns, cfg);
  if (auto trace = ap.get("--trace"))
    write_trace(*trace, {model_path, cfg.grid_size, cfg.vocab_size, ss, method_options}, gens);
  print_summary(ap, gens, {out, outputs.npz, outputs.out_dir},
                {method, method_options, ss, batch, block, run_images, seconds, pool.describe()});
  return 0;
}

}  // namespace vkspec::cli
