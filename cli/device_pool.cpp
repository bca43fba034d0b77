#include "cli/device_pool.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace vkspec::cli {
namespace {

std::string devices_present(const Instance& instance) {
  std::string s;
  for (const DeviceCaps& d : instance.devices()) s += (s.empty() ? "" : ", ") + std::to_string(d.index) + " " + d.name;
  return s.empty() ? "none" : s;
}

}  // namespace

frontend::OptionTable device_pool_options() {
  return {{"--devices", "all|N,M,...",
           "spread the images over these devices (vkspec devices; a thread and a copy of the models each; the "
           "image of seed S on the (S mod N)-th of the N listed; a device may repeat), all: every GPU "
           "(default: the one device, VKSPEC_DEVICE)"}};
}

std::vector<uint32_t> device_list(const std::optional<std::string>& spec, const Instance& instance) {
  const auto& devices = instance.devices();
  if (devices.empty()) throw Error("no Vulkan device present (vkspec devices)");
  if (!spec) return {instance.preferred_device()};
  std::vector<uint32_t> out;
  if (*spec == "all") {
    // A CPU implementation (lavapipe) beside a GPU would take its share of the images and finish
    // last by far: "all" means the GPUs, and the CPU devices only where there is nothing else.
    for (const DeviceCaps& d : devices)
      if (d.device_type != "cpu") out.push_back(d.index);
    if (out.empty())
      for (const DeviceCaps& d : devices) out.push_back(d.index);
    return out;
  }
  std::stringstream ss(*spec);
  for (std::string item; std::getline(ss, item, ',');) {
    const bool digits =
        !item.empty() && std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits)
      throw Error("--devices: '" + item + "' in '" + *spec + "' is not a device index (all, or indices such as 0,1)");
    const unsigned long index = item.size() <= 6 ? std::stoul(item) : ~0ul;
    if (index >= devices.size())
      throw Error("--devices: there is no device " + item + "; present: " + devices_present(instance));
    out.push_back(static_cast<uint32_t>(index));
  }
  if (out.empty() || spec->back() == ',')
    throw Error("--devices: '" + *spec + "' names no device (all, or indices such as 0,1)");
  return out;
}

DevicePool::DevicePool(std::shared_ptr<Instance> instance, std::vector<uint32_t> devices, const ContextOptions& options,
                       const Setup& setup)
    : instance_(std::move(instance)), workers_(devices.size()) {
  if (devices.empty()) throw Error("device pool: no devices");
  for (size_t w = 0; w < devices.size(); ++w) {
    workers_[w].device = devices[w];
    // lavapipe runs the dispatches of all contexts of one instance's device one at a time (its
    // compute lock is per driver screen, and LP_NUM_THREADS=0 runs them under it), so a CPU device
    // listed again gets an instance of its own: its own screen, dispatching beside the first.
    // Made here, before any worker runs: an instance loads the process's Vulkan entry points.
    const DeviceCaps& caps = instance_->devices().at(devices[w]);
    if (caps.cpu_driver && std::find(devices.begin(), devices.begin() + w, devices[w]) != devices.begin() + w) {
      auto own = std::make_shared<Instance>(instance_->options(), instance_->shared_validation_log());
      const auto& found = own->devices();
      if (devices[w] >= found.size() ||
          !std::equal(std::begin(caps.device_uuid), std::end(caps.device_uuid), found[devices[w]].device_uuid))
        throw Error("device pool: a second instance does not list device " + std::to_string(devices[w]) + " (" +
                    caps.name + ") at the same index");
      workers_[w].own_instance = std::move(own);
    }
  }
  // Opened in parallel: on several GPUs loading the models is the same time as on one.
  for (size_t w = 0; w < workers_.size(); ++w)
    workers_[w].thread = std::thread([this, w, options, &setup] { run(w, options, setup); });
  std::exception_ptr failed;
  size_t failed_worker = 0;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] {
      return std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.ready; });
    });
    for (size_t w = 0; w < workers_.size() && !failed; ++w)
      if (workers_[w].startup_error) failed = workers_[w].startup_error, failed_worker = w;
  }
  if (!failed) return;
  shut_down();
  if (workers_.size() == 1) std::rethrow_exception(failed);
  try {
    std::rethrow_exception(failed);
  } catch (const std::exception& e) {
    throw Error(where(failed_worker) + ": " + e.what());
  }
}

DevicePool::~DevicePool() { shut_down(); }

void DevicePool::shut_down() {
  cancel();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (Worker& w : workers_)
    if (w.thread.joinable()) w.thread.join();
}

void DevicePool::enqueue(size_t worker, Task task, bool urgent) {
  if (worker >= workers_.size()) throw Error("device pool: no worker " + std::to_string(worker));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    (urgent ? workers_[worker].urgent : workers_[worker].queued).push_back(std::move(task));
  }
  changed_.notify_all();
}

void DevicePool::run(size_t worker, const ContextOptions& options, const Setup& setup) {
  Worker& me = workers_[worker];
  std::unique_ptr<Context> ctx;
  std::unique_ptr<WorkerState> state;
  try {
    ctx = std::make_unique<Context>(me.own_instance ? me.own_instance : instance_, me.device, options);
    state = setup(*ctx, worker);
    if (!state) throw Error("device pool: setup made no worker state");
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    me.startup_error = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    me.ready = true;
  }
  changed_.notify_all();
  while (state) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !me.urgent.empty() || !me.queued.empty(); });
      if (stopping_) break;
      std::deque<Task>& from = me.urgent.empty() ? me.queued : me.urgent;
      task = std::move(from.front());
      from.pop_front();
    }
    task(*ctx, *state);  // a packaged task: its exception goes to its future
  }
  // Tasks not started are dropped here (their futures report a broken promise; nobody waits on
  // them once the pool stops). What was allocated from the Context goes before it, on this thread.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    me.urgent.clear();
    me.queued.clear();
  }
  state.reset();
  ctx.reset();
}

const DeviceCaps& DevicePool::caps(size_t worker) const { return instance_->devices().at(workers_.at(worker).device); }

std::string DevicePool::device_names() const {
  std::set<std::string> names;
  for (size_t w = 0; w < size(); ++w) names.insert(caps(w).name);
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : "; ") + n;
  return s;
}

std::string DevicePool::describe() const {
  if (size() == 1) return caps(0).name;
  std::string s = std::to_string(size()) + " devices: ";
  for (size_t w = 0; w < size(); ++w) s += (w ? ", " : "") + std::to_string(workers_[w].device) + " " + caps(w).name;
  return s;
}

std::string DevicePool::where(size_t worker) const {
  return "device " + std::to_string(workers_.at(worker).device) + " (" + caps(worker).name + ", worker " +
         std::to_string(worker) + ")";
}

}  // namespace vkspec::cli
