#include "cli/sharded_images.h"

#include <exception>
#include <future>

#include "decoding/strategy_registry.h"
#include "engine/checks/op_bench.h"

namespace vkspec::cli {
namespace {

size_t worker_of(const StrategyInputs& in, const DevicePool& pool) {
  return static_cast<size_t>(in.seed % static_cast<uint64_t>(pool.size()));
}

// A batch's counters and CPU time split over its images, so that sums over images stay the batch's.
std::vector<ShardedImage> split_batch(std::vector<Generation>&& gens, const WorkCounters& work, double busy_ms) {
  const uint64_t n = gens.size();
  std::vector<ShardedImage> out(gens.size());
  for (size_t i = 0; i < gens.size(); ++i) {
    out[i].generation = std::move(gens[i]);
    const bool first = i == 0;
    out[i].work = {
        work.dispatches / n + (first ? work.dispatches % n : 0), work.transfers / n + (first ? work.transfers % n : 0),
        work.barriers / n + (first ? work.barriers % n : 0), work.submits / n + (first ? work.submits % n : 0)};
    out[i].busy_ms = busy_ms / static_cast<double>(n);
  }
  return out;
}

}  // namespace

// Inputs per generate_batch call at `batch` images per forward: with continuous batching several
// lanes' worth, so that finished images' lanes take new ones and only each group's last images
// decode beside idle lanes; a group's results reach the caller when the group is done.
size_t images_per_call(const std::string& method, size_t batch) {
  constexpr size_t kLaneRefills = 4;
  return batch > 1 && find_strategy(method).continuous_batching ? batch * kLaneRefills : batch;
}

void generate_sharded(DevicePool& pool, const ShardedRun& run,
                      const std::function<void(size_t k, ShardedImage&&)>& take) {
  const size_t batch = static_cast<size_t>(std::max<int64_t>(run.batch, 1)), group = images_per_call(run.method, batch);
  std::vector<std::future<std::vector<ShardedImage>>> pending;
  const double workers = static_cast<double>(pool.size());
  for (size_t first = 0; first < run.inputs.size(); first += group) {
    const size_t n = std::min(group, run.inputs.size() - first);
    auto job = [&run, &pool, first, n, workers, batch](Context& ctx, ModelWorker& w) {
      pool.throw_if_cancelled();  // queued behind a failed image: never started
      const WorkCounters w0 = ctx.counters();
      const double c0 = process_cpu_seconds();
      const std::vector<StrategyInputs> inputs(run.inputs.begin() + static_cast<std::ptrdiff_t>(first),
                                               run.inputs.begin() + static_cast<std::ptrdiff_t>(first + n));
      std::vector<Generation> gens = generate_batch(
          run.method, w.models, inputs, run.keep_events,
          [&](size_t i, const StepEvent& e) {
            // Where a failed worker's neighbours stop: within one step, never a whole image later.
            pool.throw_if_cancelled();
            if (run.on_event) run.on_event(first + i, e);
          },
          static_cast<int64_t>(batch));
      const double busy = (process_cpu_seconds() - c0) * 1e3 / workers;
      if (run.on_finished)
        for (size_t i = 0; i < n; ++i) run.on_finished(first + i);
      return split_batch(std::move(gens), ctx.counters() - w0, busy);
    };
    pending.push_back(pool.submit<ModelWorker>(worker_of(run.inputs[first], pool), std::move(job)));
  }
  // In order; after the first failure only what already finished is handed over.
  std::exception_ptr first_error;
  for (size_t j = 0; j < pending.size(); ++j) {
    try {
      std::vector<ShardedImage> images = pending[j].get();
      for (size_t i = 0; i < images.size(); ++i) take(j * group + i, std::move(images[i]));
    } catch (const Cancelled&) {
      // stopped because another image failed: that one's error is the one to report
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
      pool.cancel();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  // Cancelled without an error of its own (the caller cancelled): not a success either.
  if (pool.cancelled()) throw Cancelled();
}

void warm_up(DevicePool& pool, const std::string& method, const std::vector<StrategyInputs>& inputs, int64_t batch) {
  if (inputs.empty()) return;
  const size_t b = static_cast<size_t>(std::max<int64_t>(batch, 1)), group = images_per_call(method, b);
  std::vector<std::future<void>> done;
  for (size_t w = 0; w < pool.size(); ++w)
    done.push_back(pool.submit<ModelWorker>(w, [&method, &inputs, &pool, b, group](Context&, ModelWorker& mw) {
      for (size_t first = 0; first < inputs.size(); first += group) {
        pool.throw_if_cancelled();
        const size_t n = std::min(group, inputs.size() - first);
        generate_batch(method, mw.models,
                       {inputs.begin() + static_cast<std::ptrdiff_t>(first),
                        inputs.begin() + static_cast<std::ptrdiff_t>(first + n)},
                       false, {}, static_cast<int64_t>(b));
      }
    }));
  std::exception_ptr first_error;
  for (auto& f : done) {
    try {
      f.get();
    } catch (const Cancelled&) {
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  if (pool.cancelled()) throw Cancelled();
}

frontend::OptionTable batch_options() {
  return {{"--batch", "B",
           "images per forward: B consecutive images decoded together, each with the tokens it gets alone "
           "(default 1; methods that can: " +
               batch_method_names() + ")"}};
}

int64_t batch_from(const frontend::ArgParser& ap, const std::vector<std::string>& methods, const char* command) {
  const int64_t batch = ap.get_int("--batch", 1, 1, kMaxBatchRows / 2);
  if (batch > 1)
    for (const std::string& m : methods)
      if (!find_strategy(m).make_batch)
        throw Error(std::string(command) + ": --batch " + std::to_string(batch) + ": " + m +
                    " decodes one image per forward (methods that batch: " + batch_method_names() + ")");
  return batch;
}

}  // namespace vkspec::cli
