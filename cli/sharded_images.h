#pragma once
// The images of one method spread over a DevicePool: image with seed s on worker s mod the
// workers (a fixed assignment, so a run is reproducible whatever the devices' speeds; on equal
// devices every image equals a single-device run's, token for token), handed back to the calling
// thread in the order given. With --batch B, B images share every forward
// (decoding/batch_strategy.h) on the worker of the first one's seed (a method with continuous
// batching takes 4B consecutive images, each taking the lane of one that finished); their tokens
// are the ones they get alone.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cli/device_pool.h"
#include "decoding/generation.h"
#include "frontend/arg_parser.h"
#include "frontend/model_loading.h"

namespace vkspec::cli {

// What every worker of generate and bench holds: its device's copy of the models.
struct ModelWorker : WorkerState {
  frontend::LoadedModels loaded;
  ModelSet models;
};

struct ShardedImage {
  Generation generation;
  // The worker's Context counters around the image: exact per image, whatever the other workers
  // do; with a batch, the batch's split over its images (the remainder to the first).
  WorkCounters work;
  // The process's CPU time while the image ran, divided by the workers (they run at once in one
  // process, each image's interval counting the others' work too); the single-device figure with
  // one worker.
  double busy_ms = 0;
};

struct ShardedRun {
  std::string method;
  std::vector<StrategyInputs> inputs;  // one per image
  bool keep_events = false;            // Generation::events (traces)
  int64_t batch = 1;                   // images per forward (consecutive inputs; the last forwards may have fewer)
  // Every step of image k, on its worker's thread (progress notes: must be thread-safe).
  std::function<void(size_t k, const StepEvent&)> on_event;
  // Image k finished, on its worker's thread (the progress bar: thread-safe).
  std::function<void(size_t k)> on_finished;
};

// Generates every image of `run` and calls take(k, image) on this thread for k = 0, 1, ... in
// order. When a worker fails, the others stop at their next step, take() still sees every image
// that finished (in order, skipping the rest), and the first error is then rethrown: what was
// done is never lost. The State of the pool's workers must derive from ModelWorker.
void generate_sharded(DevicePool& pool, const ShardedRun& run,
                      const std::function<void(size_t k, ShardedImage&&)>& take);

// The untimed images before timing (pipelines are compiled on first use): `inputs` on every worker,
// in parallel, `batch` at a time as the timed images will run. Throws the first worker's error.
void warm_up(DevicePool& pool, const std::string& method, const std::vector<StrategyInputs>& inputs, int64_t batch = 1);

// Inputs per generate_batch call at `batch` images per forward: several lanes' worth for a method
// with continuous batching (finished images' lanes take new ones), else `batch`.
size_t images_per_call(const std::string& method, size_t batch);

// --batch B, shared by generate and bench.
frontend::OptionTable batch_options();
// The images that share each forward, checked against the method (1 unless it can batch).
int64_t batch_from(const frontend::ArgParser& ap, const std::vector<std::string>& methods, const char* command);

}  // namespace vkspec::cli
