#pragma once
// One Vulkan device ready for compute: logical device, queue, memory allocator, pipelines (built
// on first use, kept in an on-disk VkPipelineCache), and host<->device copies.
#include <array>
#include <atomic>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/vk/buffer.h"
#include "engine/vk/device_caps.h"
#include "engine/vk/instance.h"
#include "engine/vk/pipeline.h"
#include "engine/vk/pipeline_table.h"
#include "engine/vk/tensor.h"

namespace vkspec {

struct ContextOptions {
  // Cap on device memory in bytes (0 = none). Default: VKSPEC_MAX_DEVICE_MEMORY (accepts K/M/G).
  uint64_t device_memory_cap = 0;
  // How long a submit may run before it is reported as hung. Default: VKSPEC_FENCE_TIMEOUT_MS or 60 s.
  uint64_t fence_timeout_ns = 60ull * 1000 * 1000 * 1000;
  // Added to that for each pipeline a batch runs for the first time: lavapipe compiles a
  // pipeline's code when it first runs, inside the fence wait (seconds each on a loaded 2-core
  // machine with cold caches), and that is not a hang.
  uint64_t first_use_allowance_ns = 20ull * 1000 * 1000 * 1000;
  // Where the pipeline cache lives; empty disables it. Default: VKSPEC_CACHE_DIR, else
  // $XDG_CACHE_HOME/vkspec, else ~/.cache/vkspec; VKSPEC_CACHE_DIR=off disables.
  std::string cache_dir;
  // Extra device extensions (the viewer's VK_KHR_swapchain).
  std::vector<std::string> device_extensions;
  // When set, the queue must also do graphics and present to this surface (the viewer draws and
  // computes on one queue); otherwise a compute-only family is preferred.
  VkSurfaceKHR present_surface = VK_NULL_HANDLE;
  // 0: a CommandStream submits everything recorded as one batch. Otherwise every stream submits
  // and waits after this many commands and goes on recording: the viewer sets it so that long
  // decoding steps leave gaps for its frames on a shared queue (lavapipe runs its one queue
  // serially). Host writes must not target buffers that already-recorded commands read.
  uint32_t batch_limit = 0;
  // The matmul never picks the cooperative-matrix kernel on its own (explicit requests still run
  // it). Default: VKSPEC_DISABLE_COOPMAT.
  bool disable_coopmat = false;
  // Where the device has both NV and KHR cooperative matrix, the matmul kernel goes through KHR
  // (DeviceCaps::coopmat_khr; without this, NV). Default: VKSPEC_COOPMAT_KHR.
  bool coopmat_khr = false;
  // A projection's norm, gate and residual add run on dispatches of their own, never folded into
  // the matmul (ops::MatmulFusion). Default: VKSPEC_DISABLE_MATMUL_FOLDS.
  bool disable_matmul_folds = false;
  // On a CPU device, kernels choose the variants a GPU would (caps().cpu_driver reads false), so
  // that the GPU paths are checked where only lavapipe runs. Default: VKSPEC_GPU_KERNELS.
  bool gpu_kernels = false;
  // Optional features the context treats as absent (mask_device_features' names). Default:
  // VKSPEC_MASK_FEATURES.
  std::string masked_features;
  // 0: the tile table's; otherwise the most activation rows the GEMV matmul takes. Default:
  // VKSPEC_GEMV_MAX_ROWS.
  uint32_t gemv_max_rows = 0;
  // Unset: the tile table's row-block GEMV shape; outputs 0: the plain GEMV for every M; otherwise
  // weight rows per workgroup, activation rows per subgroup and (0: the table's) the fewest rows
  // that take it. Default: VKSPEC_GEMV_ROWS_TILE.
  struct GemvRowsTile {
    uint32_t outputs = 0, rows_per_subgroup = 0, from = 0;
  };
  std::optional<GemvRowsTile> gemv_rows_tile;
  static ContextOptions from_environment();
};

// Running totals of what the context's CommandStreams recorded and submitted. Benchmarks take
// the difference around a run and divide by tokens or forwards: on every device each dispatch has
// a fixed cost (recording, launch, the barrier before it), so dispatches per token is a number
// to drive down next to milliseconds.
struct WorkCounters {
  enum Kind { Dispatch, Transfer, Barrier, Submit, kKinds };
  uint64_t dispatches = 0;  // compute dispatches (vkCmdDispatch)
  uint64_t transfers = 0;   // copies and fills
  uint64_t barriers = 0;    // pipeline barriers between commands
  uint64_t submits = 0;     // queue submissions
  WorkCounters operator-(const WorkCounters& o) const {
    return {dispatches - o.dispatches, transfers - o.transfers, barriers - o.barriers, submits - o.submits};
  }
  WorkCounters& operator+=(const WorkCounters& o) {
    dispatches += o.dispatches, transfers += o.transfers, barriers += o.barriers, submits += o.submits;
    return *this;
  }
};

class Context {
 public:
  Context(std::shared_ptr<Instance> instance, uint32_t device_index,
          const ContextOptions& options = ContextOptions::from_environment());
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Instance from the environment (VKSPEC_VALIDATION) and the preferred device (VKSPEC_DEVICE).
  static std::unique_ptr<Context> create_default();

  Instance& instance() { return *instance_; }
  const DeviceCaps& caps() const { return caps_; }
  VkDevice device() const { return device_; }
  VkPhysicalDevice physical_device() const { return physical_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  // Held around every vkQueueSubmit / vkQueuePresentKHR: threads share the one queue.
  std::mutex& queue_mutex() { return queue_mutex_; }
  const ContextOptions& options() const { return options_; }
  Allocator& allocator() { return *allocator_; }

  // Built on first request for (shader, spec), then shared; shader ids are in the generated
  // "shaders/shader_ids.h". Thread-safe, and lock-free once built (PipelineTable).
  const Pipeline& pipeline(ShaderId shader, std::initializer_list<uint32_t> spec = {}) {
    return pipelines_->get(shader, spec);
  }

  Tensor tensor(DType dtype, Shape shape, const std::string& name, MemoryUsage usage = MemoryUsage::Device);
  // Whole-tensor copies from / to the host; bytes must equal the tensor's size. Go through a
  // staging buffer when the memory is not host-visible.
  void upload(const Tensor& t, const void* data, size_t bytes);
  void download(const Tensor& t, void* data, size_t bytes);
  // Sub-range copies (offset and bytes in bytes, relative to the tensor).
  void upload(const Tensor& t, size_t offset, const void* data, size_t bytes);
  void download(const Tensor& t, size_t offset, void* data, size_t bytes);

  // Workgroup size for 1D reduction-style kernels: a multiple of the largest subgroup size near 256.
  uint32_t default_workgroup_size() const;

  // Totals since the context was created; CommandStream calls count_work. Thread-safe.
  WorkCounters counters() const {
    return {counts_[WorkCounters::Dispatch].load(), counts_[WorkCounters::Transfer].load(),
            counts_[WorkCounters::Barrier].load(), counts_[WorkCounters::Submit].load()};
  }
  void count_work(WorkCounters::Kind k) { counts_[k].fetch_add(1, std::memory_order_relaxed); }
  // Pipelines dispatched for the first time since the context was created (Pipeline::take_first_use):
  // on a CPU driver each is a compile inside the fence wait, so benchmarks check that none happens
  // while they time.
  uint64_t first_uses() const { return first_uses_.load(); }
  void count_first_use() { first_uses_.fetch_add(1, std::memory_order_relaxed); }

 private:
  // What the destructor does; also undoes a constructor that throws after creating the device.
  void release();
  // Runs shaders/subgroup_probe.comp: throws Error when a subgroup has fewer lanes than caps_ says.
  void check_subgroup_lanes(const std::string& where);
  void load_pipeline_cache();
  void save_pipeline_cache();
  std::string pipeline_cache_path() const;

  std::shared_ptr<Instance> instance_;
  ContextOptions options_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  DeviceCaps caps_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  std::mutex queue_mutex_;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<PipelineTable> pipelines_;
  std::array<std::atomic<uint64_t>, WorkCounters::kKinds> counts_{};
  std::atomic<uint64_t> first_uses_{0};
};

}  // namespace vkspec
