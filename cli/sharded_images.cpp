#include "cli/sharded_images.h"

#include <exception>
#include <future>

#include "engine/checks/op_bench.h"

namespace vkspec::cli {
namespace {

size_t worker_of(const StrategyInputs& in, const DevicePool& pool) {
  return static_cast<size_t>(in.seed % static_cast<uint64_t>(pool.size()));
}

}  // namespace

void generate_sharded(DevicePool& pool, const ShardedRun& run,
                      const std::function<void(size_t k, ShardedImage&&)>& take) {
  std::vector<std::future<ShardedImage>> pending;
  pending.reserve(run.inputs.size());
  const double workers = static_cast<double>(pool.size());
  for (size_t k = 0; k < run.inputs.size(); ++k) {
    pending.push_back(pool.submit<ModelWorker>(worker_of(run.inputs[k], pool), [&run, &pool, k, workers](
                                                                                   Context& ctx, ModelWorker& w) {
      pool.throw_if_cancelled();  // queued behind a failed image: never started
      ShardedImage out;
      const WorkCounters w0 = ctx.counters();
      const double c0 = process_cpu_seconds();
      out.generation = generate_one(run.method, w.models, run.inputs[k], run.keep_events, [&](const StepEvent& e) {
        // Where a failed worker's neighbours stop: within one step, never a whole image later.
        pool.throw_if_cancelled();
        if (run.on_event) run.on_event(k, e);
      });
      out.busy_ms = (process_cpu_seconds() - c0) * 1e3 / workers;
      out.work = ctx.counters() - w0;
      if (run.on_finished) run.on_finished(k);
      return out;
    }));
  }
  // In order; after the first failure only what already finished is handed over.
  std::exception_ptr first_error;
  for (size_t k = 0; k < pending.size(); ++k) {
    try {
      ShardedImage image = pending[k].get();
      take(k, std::move(image));
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

void warm_up(DevicePool& pool, const std::string& method, const std::vector<StrategyInputs>& inputs) {
  if (inputs.empty()) return;
  std::vector<std::future<void>> done;
  for (size_t w = 0; w < pool.size(); ++w)
    done.push_back(pool.submit<ModelWorker>(w, [&method, &inputs, &pool](Context&, ModelWorker& mw) {
      for (const StrategyInputs& in : inputs) {
        pool.throw_if_cancelled();
        generate_one(method, mw.models, in, false);
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

}  // namespace vkspec::cli
