#include "cli/bench_run.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "cli/bench_samples.h"
#include "cli/device_pool.h"
#include "cli/progress.h"
#include "cli/prompt_list.h"
#include "cli/run_info.h"
#include "cli/sharded_images.h"
#include "cli/token_images.h"
#include "decoding/generation.h"
#include "decoding/iteration_stats.h"
#include "decoding/strategy_registry.h"
#include "engine/ops/kernel_rounding.h"
#include "engine/vk/memory_report.h"
#include "eval/fashion_mnist.h"
#include "eval/image_judge.h"
#include "eval/sample_completeness.h"
#include "frontend/model_loading.h"
#include "frontend/sampler_options.h"

namespace vkspec::cli {
namespace {

using Run = frontend::MethodRun;
using Meta = std::map<std::string, std::string>;

// What worker 0 keeps besides the models: the judge and the --npz/--out-dir decoder.
struct BenchWorker : ModelWorker {
  std::unique_ptr<ImageJudge> judge;
  std::optional<TokenImages> decoder;
};

// Pipelines first run on any worker so far: a CPU driver compiles each inside a timed image's
// fence wait, so those run after the warm-up are reported with the results.
constexpr int64_t kAutoWarmupImages = 8;  // the most --warmup auto runs per method

uint64_t first_uses(DevicePool& pool) {
  auto count = [](Context& ctx, BenchWorker&) { return ctx.first_uses(); };
  uint64_t n = 0;
  for (size_t w = 0; w < pool.size(); ++w) n += pool.submit<BenchWorker>(w, count, true).get();
  return n;
}

// After a worker failed: the images that finished are judged and saved (judge_and_save), or when
// that fails too (worker 0's device is the one lost) the judged ones alone, since a sample file
// holds features for all of its images or none. Never throws: the worker's error is what to report.
void save_after_failure(SampleSet& set, std::vector<size_t>& unjudged, const std::string& file,
                        const std::function<void()>& judge_and_save) {
  try {
    judge_and_save();
    return;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: the %zu image(s) waiting to be judged are not kept: %s\n", unjudged.size(), e.what());
  }
  set.images.resize(set.images.size() - unjudged.size());  // the unjudged are the last ones
  unjudged.clear();
  if (file.empty()) return;
  try {
    write_sample_set(file, set);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench: could not save %s: %s\n", file.c_str(), e.what());
  }
}

// One run's generation in progress: its result, the images still to make and those made but
// not yet judged, and its share of the wall-clock.
struct RunState {
  RunResult r;
  std::string label, file;
  ShardedRun todo;
  int64_t jacobi_window = 0;
  std::vector<size_t> unjudged;  // records waiting for the judge's batch
  double seconds = 0;            // generating this run's images
};

class LiveBench {
 public:
  LiveBench(const frontend::ArgParser& ap, const BenchPlan& plan)
      : ap_(ap), plan_(plan), runs_(plan.runs), catalog_(frontend::model_files(ap, ap.get("--prompts").has_value())) {}

  LiveBenchResults run();

 private:
  std::vector<Meta> open_devices();
  std::vector<SampleSet> resume_samples(std::vector<Meta> metas);
  void load_reference();
  StrategyInputs inputs(const Run& run, uint64_t image_seed) const;
  void prepare_runs(std::vector<SampleSet> resumed);
  void judge_and_save(RunState& st);
  void make_prompt_conditions();
  void warm_up_runs();
  void generate_timed();
  bool generate_part(size_t i, size_t round_index);
  void record_image(RunState& st, ShardedImage&& done);
  std::vector<RunResult> finish_runs();
  ReportHeader header() const;

  // worker 0's task, urgent (between two of its images), waited for.
  template <class F>
  auto on_worker0(F fn) {
    return pool_->submit<BenchWorker>(0, std::move(fn), true).get();
  }

  const frontend::ArgParser& ap_;
  const BenchPlan& plan_;
  const std::vector<Run>& runs_;
  const frontend::ModelCatalog catalog_;
  bool judged_ = false;
  std::string classifier_;  // its path, "" when not judged
  std::unique_ptr<DevicePool> pool_;
  GptConfig cfg_;
  SamplerSettings ss_;
  std::optional<PromptList> prompts_;                         // --prompts
  std::vector<std::shared_ptr<const Condition>> conditions_;  // one per prompt, made on worker 0
  std::string drafter_;                                       // its path, "" when none was loaded
  ReferenceSet reference_;
  std::vector<RunState> states_;
  size_t longest_ = 0, total_ = 0;  // images still to make: the most of one run, of all
  bool interleaved_ = false;
  uint64_t late_compiles_ = 0;
  std::optional<Progress> progress_;
};

LiveBenchResults LiveBench::run() {
  std::vector<SampleSet> resumed = resume_samples(open_devices());
  load_reference();
  prepare_runs(std::move(resumed));
  // Untimed images first, every run's, on every device: pipelines are compiled on first use.
  warm_up_runs();
  const uint64_t first_uses_before = first_uses(*pool_);
  // Interleaved (the default): a round makes the next image of every run in turn (one per device),
  // so a change in the machine's load during the command reaches every method alike and the
  // wall-clock ratios against ar stay fair on a shared machine; sequential: one run after another.
  interleaved_ = plan_.order == "interleaved" && runs_.size() > 1;
  generate_timed();
  late_compiles_ = first_uses(*pool_) - first_uses_before;
  if (late_compiles_)
    std::fprintf(stderr,
                 "bench: %llu pipeline(s) first ran during timed images, after the warm-up (a CPU driver compiles "
                 "each then: raise --warmup for timings that exclude it)\n",
                 static_cast<unsigned long long>(late_compiles_));
  LiveBenchResults out;
  out.results = finish_runs();
  out.header = header();
  out.reference = std::move(reference_);
  return out;
}

// Opens one worker per --devices entry with its own copy of the models; worker 0 also judges the
// images (in the batches a single device would) and decodes --npz/--out-dir, between its own
// images, so quality and files are the single-device run's. Returns each run's metadata.
std::vector<Meta> LiveBench::open_devices() {
  // --classifier none: no class accuracy (and no tokenizer needed), e.g. for untrained models.
  judged_ = catalog_.given(frontend::ModelRole::Classifier) != "none";
  classifier_ = judged_ ? catalog_.path(frontend::ModelRole::Classifier) : "";
  frontend::ModelRequest request = frontend::request_for(catalog_, runs_);
  for (const Run& run : runs_) request.batch = std::max(request.batch, run.batch);
  const bool outputs = plan_.outputs.any();
  auto instance = std::make_shared<Instance>();
  auto setup = [&](Context& ctx, size_t worker) {
    auto w = std::make_unique<BenchWorker>();
    frontend::ModelRequest r = request;
    r.tokenizer = worker == 0 && (judged_ || outputs);
    r.tokenizer_batch = ImageJudge::kBatch;
    w->loaded = frontend::load_models(ctx, catalog_, r);
    w->models = w->loaded.set(ctx);
    const int64_t grid = w->loaded.target->config().grid_size;
    if (worker == 0 && judged_) w->judge = std::make_unique<ImageJudge>(ctx, *w->loaded.tokenizer, grid, classifier_);
    if (worker == 0 && outputs) w->decoder.emplace(ctx, *w->loaded.tokenizer, grid, ImageJudge::kBatch);
    return w;
  };
  pool_ = std::make_unique<DevicePool>(instance, device_list(ap_.get("--devices"), *instance),
                                       ContextOptions::from_environment(), setup);
  cfg_ = on_worker0([](Context&, BenchWorker& w) { return w.loaded.target->config(); });
  ss_ = frontend::sampler_overrides(ap_).applied_to(SamplerSettings::from_defaults(cfg_.defaults));
  make_prompt_conditions();
  const std::string devices = pool_->device_names();
  return on_worker0([&](Context& ctx, BenchWorker& w) {
    if (w.loaded.drafter) drafter_ = w.loaded.drafter->path();
    // The first device's kernels (a pool mixing CPU and GPU devices records the first one's).
    const std::string rounding = ops::kernel_rounding(ctx.caps());
    std::vector<Meta> m;
    for (const Run& run : runs_) {
      m.push_back(run_meta(run, w.loaded, ss_, classifier_, devices, rounding));
      if (prompts_) m.back()["prompts"] = prompts_->identity;  // other prompts: another experiment
    }
    return m;
  });
}

// Sample files to resume are checked before anything slow (the test set's statistics, the
// first image), so a folder of other settings fails in a second. Returns each run's records so far.
std::vector<SampleSet> LiveBench::resume_samples(std::vector<Meta> metas) {
  std::vector<SampleSet> resumed(runs_.size());
  states_.resize(runs_.size());
  for (size_t i = 0; i < runs_.size(); ++i) {
    resumed[i].meta = std::move(metas[i]);
    resumed[i].meta["run_seeds"] = run_seeds_text(plan_.run_seed, plan_.run_images, plan_.shard.count);
    if (!plan_.samples_dir.empty()) states_[i].file = samples_file(plan_.samples_dir, runs_[i], plan_.seed);
    const std::string& file = states_[i].file;
    std::error_code ec;
    if (file.empty() || !std::filesystem::exists(file, ec)) continue;
    SampleSet old = read_sample_set(file);
    auto rounding = [](const SampleSet& s) {  // "" where absent (kernel_rounding.h)
      const auto it = s.meta.find("rounding");
      return it == s.meta.end() ? std::string() : it->second;
    };
    if (sample_set_key(old) != sample_set_key(resumed[i]))
      throw Error("bench: " + file + " holds images of other settings (" + old.meta.at("models") + ", " +
                  old.meta.at("sampler") + ", kernel rounding \"" + rounding(old) + "\" where this run has \"" +
                  rounding(resumed[i]) + "\"); use another --samples folder");
    resumed[i].images = std::move(old.images);
  }
  return resumed;
}

void LiveBench::load_reference() {
  if (!judged_) return;
  // --dataset none: class accuracy and drift from ar only.
  const std::string dataset = ap_.get_or("--dataset", fashion_mnist_dir());
  if (dataset != "none")
    reference_ =
        on_worker0([&](Context& ctx, BenchWorker&) { return fashion_mnist_test_reference(ctx, classifier_, dataset); });
}

// --prompts: each prompt's condition, through the target's tokenizer and template, once; a model
// that takes prompts needs them, one that takes classes refuses them.
void LiveBench::make_prompt_conditions() {
  const auto file = ap_.get("--prompts");
  if (!file) {
    if (cfg_.num_classes < 1)
      throw Error("bench: " + catalog_.path(frontend::ModelRole::Target) + " (" + cfg_.family +
                  ") takes no class: give --prompts FILE");
    return;
  }
  prompts_ = read_prompt_list(*file);
  conditions_ = on_worker0([&](Context&, BenchWorker& w) {
    std::vector<std::shared_ptr<const Condition>> c;
    for (const std::string& text : prompts_->texts) c.push_back(w.loaded.target->prompt_condition(text));
    return c;
  });
}

// Image i of this command: seed + i, class (seed + i) mod classes (or prompt (seed + i) mod
// prompts), so any split of a seed range over several commands draws the same images.
StrategyInputs LiveBench::inputs(const Run& run, uint64_t image_seed) const {
  StrategyInputs in;
  if (prompts_)
    in.condition = conditions_[image_seed % conditions_.size()];
  else
    in.condition =
        std::make_shared<ClassLabel>(static_cast<int64_t>(image_seed % static_cast<uint64_t>(cfg_.num_classes)));
  in.seed = image_seed;
  in.sampler = ss_;
  in.options = run.options;
  in.profile = plan_.profile;
  return in;
}

// Each run's state: the records resumed, and the requested seeds they lack still to make.
void LiveBench::prepare_runs(std::vector<SampleSet> resumed) {
  for (size_t i = 0; i < runs_.size(); ++i) {
    RunState& st = states_[i];
    st.r.run = runs_[i];
    st.label = run_label(runs_[i]);
    SampleSet& set = st.r.samples;
    set = std::move(resumed[i]);
    std::set<uint64_t> have;
    for (const ImageRecord& im : set.images) have.insert(im.seed);
    if (!set.images.empty())
      std::fprintf(stderr, "bench: %s: %zu images already in %s\n", st.label.c_str(), set.images.size(),
                   st.file.c_str());
    st.todo.method = runs_[i].method;
    // --iterations reads each image's steps, so those images keep their events.
    st.jacobi_window = find_strategy(runs_[i].method).jacobi_window_for(runs_[i].options);
    if (plan_.iterations && st.jacobi_window > 0) {
      st.r.iterations.emplace();
      st.todo.keep_events = true;
    }
    for (int64_t k = 0; k < plan_.images; ++k)
      if (!have.count(plan_.seed + static_cast<uint64_t>(k)))
        st.todo.inputs.push_back(inputs(runs_[i], plan_.seed + static_cast<uint64_t>(k)));
    longest_ = std::max(longest_, st.todo.inputs.size());
    total_ += st.todo.inputs.size();
  }
}

// The run's images made but not judged get their verdicts (worker 0), and its sample file is saved.
void LiveBench::judge_and_save(RunState& st) {
  SampleSet& set = st.r.samples;
  if (judged_ && !st.unjudged.empty()) {
    const Verdict v = on_worker0([&](Context&, BenchWorker& w) {
      for (size_t j : st.unjudged) w.judge->add(set.images[j].tokens, set.images[j].class_id);
      return w.judge->take();
    });
    for (size_t j = 0; j < st.unjudged.size(); ++j) {
      ImageRecord& im = set.images[st.unjudged[j]];
      im.predicted = v.predicted[j];
      im.features.assign(v.features.begin() + static_cast<std::ptrdiff_t>(j * v.feature_dim),
                         v.features.begin() + static_cast<std::ptrdiff_t>((j + 1) * v.feature_dim));
    }
  }
  st.unjudged.clear();
  if (!st.file.empty()) write_sample_set(st.file, set);
}

void LiveBench::warm_up_runs() {
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (states_[i].todo.inputs.empty()) continue;
    const int64_t most = plan_.warmup < 0 ? kAutoWarmupImages : plan_.warmup, b = runs_[i].batch;
    for (int64_t k = 0; k < most; ++k) {
      const uint64_t before = first_uses(*pool_);
      std::vector<StrategyInputs> batch;  // a warm-up image is a whole batch: its forwards' shapes
      for (int64_t j = 0; j < b; ++j)
        batch.push_back(inputs(runs_[i], plan_.seed + static_cast<uint64_t>(plan_.images + k * b + j)));
      warm_up(*pool_, runs_[i].method, batch, b);
      if (plan_.warmup < 0 && first_uses(*pool_) == before) break;
    }
  }
}

void LiveBench::generate_timed() {
  if (interleaved_ && total_ > 0)
    progress_.emplace("bench " + std::to_string(runs_.size()) + " runs, interleaved", static_cast<int64_t>(total_));
  try {
    for (size_t r = 0, any = 1; any; ++r) {
      any = 0;
      for (size_t i = 0; i < runs_.size(); ++i)
        if (generate_part(i, r)) any = 1;
    }
  } catch (...) {
    if (progress_) progress_->finish();
    for (RunState& st : states_) save_after_failure(st.r.samples, st.unjudged, st.file, [&] { judge_and_save(st); });
    throw;
  }
  if (progress_) progress_->finish();
}

// Run i's images of round r; false when it has none left. A round gives each run one call's
// images per device (interleaved: one batch, or several with continuous batching) or all of its
// images.
bool LiveBench::generate_part(size_t i, size_t r) {
  RunState& st = states_[i];
  const Run& run = runs_[i];
  const size_t round =
      interleaved_ ? std::max<size_t>(pool_->size(), 1) * images_per_call(run.method, static_cast<size_t>(run.batch))
                   : std::max<size_t>(longest_, 1);
  const size_t first = r * round;
  if (first >= st.todo.inputs.size()) return false;
  ShardedRun part;
  part.method = st.todo.method;
  part.keep_events = st.todo.keep_events;
  part.batch = run.batch;
  part.inputs.assign(st.todo.inputs.begin() + static_cast<std::ptrdiff_t>(first),
                     st.todo.inputs.begin() +
                         static_cast<std::ptrdiff_t>(std::min(first + round, st.todo.inputs.size())));
  if (!interleaved_)
    progress_.emplace("bench " + st.label + " (run " + std::to_string(i + 1) + "/" + std::to_string(runs_.size()) + ")",
                      static_cast<int64_t>(part.inputs.size()));
  part.on_finished = [this](size_t) { progress_->image_done(); };
  // Images come back in seed order whichever device made them; records are saved a judge's
  // batch at a time, and on a failure whatever finished is judged and saved before the error shows.
  const auto started = std::chrono::steady_clock::now();
  generate_sharded(*pool_, part, [&](size_t, ShardedImage&& done) { record_image(st, std::move(done)); });
  st.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!interleaved_) progress_->finish();
  return true;
}

void LiveBench::record_image(RunState& st, ShardedImage&& done) {
  Generation& g = done.generation;
  if (plan_.profile) st.r.kernels.add(g);
  if (st.r.iterations) st.r.iterations->add(jacobi_iteration_stats(g.events, st.jacobi_window, cfg_.image_tokens()));
  // Timings as the sample file keeps them (float32), so that a summary of this run equals
  // one resumed from its files: a paired difference of two close times loses digits.
  auto stored = [](double ms) { return static_cast<double>(static_cast<float>(ms)); };
  ImageRecord im;
  im.busy_ms = stored(done.busy_ms);
  im.work = done.work;
  im.seed = g.seed;
  im.class_id = prompts_ ? prompts_->class_for(g.seed) : g.class_id;  // a prompt's class from its line
  im.nfe = g.nfe;
  im.draft_forwards = g.draft_forwards;
  im.head_forwards = g.head_forwards;
  for (int k = 0; k < ImageRecord::kStageCount; ++k) {
    auto it = g.device_ms_by_stage.find(ImageRecord::kStages[k]);
    im.stage_ms[static_cast<size_t>(k)] = it == g.device_ms_by_stage.end() ? 0.0 : stored(it->second);
  }
  im.islands = g.islands;
  im.wall_ms = stored(g.wall_ms);
  im.device_ms = stored(g.device_ms);
  im.tokens = std::move(g.tokens);
  st.unjudged.push_back(st.r.samples.images.size());
  st.r.samples.images.push_back(std::move(im));
  if (static_cast<int64_t>(st.unjudged.size()) == ImageJudge::kBatch) judge_and_save(st);
}

// Each run's last records judged and saved, its summary over the requested seeds, its memory, and
// its --npz/--out-dir files.
std::vector<RunResult> LiveBench::finish_runs() {
  std::vector<RunResult> results;
  const uint64_t seed = plan_.seed;
  for (size_t i = 0; i < runs_.size(); ++i) {
    RunState& st = states_[i];
    RunResult& r = st.r;
    if (!st.todo.inputs.empty()) r.images_per_s = static_cast<double>(st.todo.inputs.size()) / st.seconds;
    judge_and_save(st);
    // The table covers the requested seeds (a file may hold more from an earlier, longer command).
    SampleSet shown{r.samples.meta, {}, {}};
    for (const ImageRecord& im : r.samples.images)
      if (im.seed >= seed && im.seed < seed + static_cast<uint64_t>(plan_.images)) shown.images.push_back(im);
    r.sum = summarize_samples(shown);
    r.samples.images.clear();
    // Worker 0's device memory (and the process's RSS).
    r.memory = on_worker0([](Context& ctx, BenchWorker&) { return memory_report(ctx); });
    r.memory_known = true;
    // The table comes at the end; a line per finished run shows progress in logs of long runs.
    std::fprintf(stderr,
                 "bench: %s: %lld images, NFE %.1f, median %.0f ms per image, %s images/s on %zu device(s), %s\n",
                 st.label.c_str(), static_cast<long long>(r.sum.images), r.sum.nfe_mean, r.sum.latency_median,
                 measured_cell(r.images_per_s, "%.3g").c_str(), pool_->size(), r.memory.str().c_str());
    if (plan_.outputs.any())
      on_worker0([&](Context&, BenchWorker& w) {
        write_run_samples(plan_.outputs_of_run[i], *w.decoder, shown, cfg_.image_tokens());
      });
    results.push_back(std::move(r));
  }
  return results;
}

ReportHeader LiveBench::header() const {
  ReportHeader h;
  h.device = pool_->describe();
  h.device_note = lavapipe_threads(pool_->caps(0));
  if (!h.device_note.empty()) h.extra["device_note"] = h.device_note;
  h.model = catalog_.path(frontend::ModelRole::Target);
  h.sampler = ss_.str();
  h.image_tokens = cfg_.image_tokens();
  h.profile = plan_.profile;
  h.workers = pool_->size();
  if (!drafter_.empty()) h.extra["drafter"] = drafter_;
  h.extra["sampler_settings"] = {{"cfg", ss_.cfg},
                                 {"temperature", ss_.temperature},
                                 {"top_k", ss_.top_k},
                                 {"top_p", ss_.top_p},
                                 {"entropy_temperature", ss_.entropy.on}};
  if (ss_.entropy.on) h.extra["sampler_settings"]["entropy_abc"] = {ss_.entropy.a, ss_.entropy.b, ss_.entropy.c};
  h.extra["device_count"] = pool_->size();  // --devices: 2 for "0,0"
  h.extra["order"] = interleaved_ ? "interleaved" : "sequential";
  h.extra["pipelines_first_run_while_timed"] = late_compiles_;
  return h;
}

}  // namespace

LiveBenchResults run_bench(const frontend::ArgParser& ap, const BenchPlan& plan) {
  LiveBench bench(ap, plan);
  return bench.run();
}

}  // namespace vkspec::cli
