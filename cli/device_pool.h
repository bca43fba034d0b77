#pragma once
// `--devices all|LIST` of generate and bench: one worker thread per listed device, each with its
// own Context and the state its command loads there (models, judge, decoder). A Context, its
// allocator and everything allocated from it are created, used and destroyed on their worker's
// thread only: other threads hand a worker tasks and get results (or the task's exception) back
// through futures. The same device may be listed twice (two contexts on one device): how a machine
// with one device (CI's lavapipe) tests the machinery, and on a CPU driver how its cores make
// several images at once (each repeat opens its own instance: see DevicePool's constructor).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "engine/vk/context.h"
#include "frontend/arg_parser.h"

namespace vkspec::cli {

// The --devices entry of generate's and bench's option tables.
frontend::OptionTable device_pool_options();

// The device indices --devices names: "all" is every device that is not a CPU implementation (every
// device when all are), "0,2" those devices in that order (repeats allowed). No value: the one device
// a run without the option uses (VKSPEC_DEVICE, else discrete > integrated > CPU). Throws Error naming
// the bad entry and the devices present.
std::vector<uint32_t> device_list(const std::optional<std::string>& spec, const Instance& instance);

// What a command keeps on each worker; it derives its own.
struct WorkerState {
  virtual ~WorkerState() = default;
};

// Thrown by tasks that stop because the pool was cancelled (another worker failed).
class Cancelled : public Error {
 public:
  Cancelled() : Error("cancelled") {}
};

class DevicePool {
 public:
  // Runs on each worker's thread once its Context is open; worker is the position in `devices`.
  using Setup = std::function<std::unique_ptr<WorkerState>(Context& ctx, size_t worker)>;

  // Opens every device and runs `setup` on each, all in parallel; throws the first worker's error
  // (naming its device when there are several) after closing the others.
  DevicePool(std::shared_ptr<Instance> instance, std::vector<uint32_t> devices, const ContextOptions& options,
             const Setup& setup);
  // Cancels, drops tasks not started, waits for the running ones (a generation stops at its next
  // step: see throw_if_cancelled), and closes each worker's state and Context on its own thread.
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  size_t size() const { return workers_.size(); }
  const DeviceCaps& caps(size_t worker) const;
  // The device's name, or for several the distinct names joined by "; " (as merged sample files
  // list them): what results record as their device.
  std::string device_names() const;
  // "llvmpipe (...)"; with several workers "2 devices: 0 llvmpipe (...), 0 llvmpipe (...)".
  std::string describe() const;

  // fn(Context&, State&) runs on `worker`'s thread; State is the type setup() made there. Tasks run
  // in the order given, urgent ones before the queued others (between two images: the judge and
  // the decoder on worker 0 while it still has images queued). A task that throws cancels the pool;
  // with several workers its error names the device.
  template <class State, class F>
  auto submit(size_t worker, F fn, bool urgent = false)
      -> std::future<decltype(fn(std::declval<Context&>(), std::declval<State&>()))> {
    using R = decltype(fn(std::declval<Context&>(), std::declval<State&>()));
    auto task = std::make_shared<std::packaged_task<R(Context&, WorkerState&)>>(
        [this, worker, fn = std::move(fn)](Context& ctx, WorkerState& state) -> R {
          auto* typed = dynamic_cast<State*>(&state);
          if (!typed) throw Error("device pool: a task asked worker " + std::to_string(worker) + " for another state");
          try {
            return fn(ctx, *typed);
          } catch (const Cancelled&) {
            throw;
          } catch (const std::exception& e) {
            cancel();
            if (size() == 1) throw;
            throw Error(where(worker) + ": " + e.what());
          }
        });
    std::future<R> result = task->get_future();
    enqueue(
        worker, [task](Context& ctx, WorkerState& state) { (*task)(ctx, state); }, urgent);
    return result;
  }

  // Stops the work: generations see it at their next step (throw_if_cancelled). Thread-safe.
  void cancel() { cancelled_ = true; }
  bool cancelled() const { return cancelled_; }
  void throw_if_cancelled() const {
    if (cancelled_) throw Cancelled();
  }

 private:
  using Task = std::function<void(Context&, WorkerState&)>;
  struct Worker {
    uint32_t device = 0;
    // A CPU driver's device listed again gets an instance of its own (see the constructor).
    std::shared_ptr<Instance> own_instance;
    std::thread thread;
    std::deque<Task> urgent, queued;
    std::exception_ptr startup_error;
    bool ready = false;
  };

  void enqueue(size_t worker, Task task, bool urgent);
  void run(size_t worker, const ContextOptions& options, const Setup& setup);
  void shut_down();
  std::string where(size_t worker) const;  // "device 1 (NAME)"

  std::shared_ptr<Instance> instance_;
  std::vector<Worker> workers_;
  std::mutex mutex_;  // guards every Worker's queues and flags, and stopping_
  std::condition_variable changed_;
  bool stopping_ = false;
  std::atomic<bool> cancelled_{false};
};

}  // namespace vkspec::cli
