#pragma once
// Records many dispatches and copies into one command buffer, inserting a barrier only where a
// command touches a buffer range an earlier, unsynchronised command wrote (or writes one that an
// earlier command read), submits once, waits with a timeout and reads per-command timestamps.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <volk.h>

#include "engine/vk/binding_staging.h"
#include "engine/vk/descriptor_arena.h"
#include "engine/vk/pipeline.h"
#include "engine/vk/tensor.h"

namespace vkspec {

class Context;

struct CommandTiming {
  std::string label;  // pipeline name or "copy"/"fill"
  double ms = 0;
  std::string stage;  // set_stage() when the command was recorded ("" when never set)
};

// The commands of one label in one stage: how many and their milliseconds.
struct KernelTime {
  int64_t calls = 0;
  double ms = 0;
  KernelTime& operator+=(const KernelTime& o) {
    calls += o.calls;
    ms += o.ms;
    return *this;
  }
};
// Keyed by (stage, label).
using KernelTimes = std::map<std::pair<std::string, std::string>, KernelTime>;

// One copy of a region list: src and dst of equal byte counts.
struct CopyRegion {
  TensorView src, dst;
};

class CommandStream {
 public:
  // profile: write a timestamp after every command (when the queue supports timestamps).
  explicit CommandStream(Context& ctx, bool profile = false);
  ~CommandStream();
  CommandStream(const CommandStream&) = delete;
  CommandStream& operator=(const CommandStream&) = delete;

  Context& context() { return ctx_; }

  // bindings[i] goes to binding i; their number must match the shader's. push_size must equal
  // the shader's push-constant block size.
  void dispatch(const Pipeline& p, std::initializer_list<TensorView> bindings, const void* push, uint32_t push_size,
                uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1);
  template <class Push>
  void dispatch(const Pipeline& p, std::initializer_list<TensorView> bindings, const Push& push, uint32_t groups_x,
                uint32_t groups_y = 1, uint32_t groups_z = 1) {
    dispatch(p, bindings, &push, static_cast<uint32_t>(sizeof(Push)), groups_x, groups_y, groups_z);
  }
  void copy(const TensorView& src, const TensorView& dst);
  // Many copies as few commands, in order: consecutive regions between the same two buffers share
  // one vkCmdCopyBuffer region list (regions that continue the previous one on both sides merge
  // into it) unless a region reads or writes what an earlier region of that command writes (or
  // writes what it reads), which starts a new command. Rows picked one by one on the host then
  // cost one command instead of one each.
  void copy(const std::vector<CopyRegion>& regions);
  // Fills dst with a repeated 32-bit word (0 zeroes any dtype).
  void fill(const TensorView& dst, uint32_t word);

  // Submits what was recorded and waits for it; the stream can then be reused. Throws VulkanError
  // on device loss and Error on a fence timeout (ContextOptions::fence_timeout_ns).
  void submit_and_wait();
  void submit();
  void wait();
  bool pending() const { return submitted_; }

  // Commands recorded since the last submit / in the last submitted batch; dispatch_count()
  // counts only the compute dispatches among them (not copies, fills or empty dispatches), the
  // number that per-dispatch overhead multiplies. Context::counters() has the running totals.
  uint32_t command_count() const { return command_count_; }
  uint32_t dispatch_count() const { return dispatch_count_; }
  uint32_t barrier_count() const { return barrier_count_; }
  // After wait(), with profiling on: one entry per command of the last batch.
  const std::vector<CommandTiming>& timings() const { return timings_; }
  // Sum of timings() in milliseconds (0 without profiling).
  double total_ms() const;
  // Names the part of the work the commands recorded from now on belong to (a model's forward,
  // sampling, ...), so timings can be summed per part: what benchmarks split a step's GPU time by.
  void set_stage(std::string stage) { stage_ = std::move(stage); }
  // timings() summed per stage.
  std::map<std::string, double> ms_by_stage() const;
  // timings() summed per (stage, label): where a stage's time goes, kernel by kernel.
  KernelTimes ms_by_kernel() const;

 private:
  struct Range {
    VkBuffer buffer;
    VkDeviceSize begin, end;
  };
  void begin_if_needed();
  // Adds a barrier if this access conflicts with unsynchronised earlier ones, then records it.
  void track(const std::vector<Range>& reads, const std::vector<Range>& writes);
  void stamp(const std::string& label);
  // Binds the dispatch's buffers: pushed where the device has push descriptors, else written to a
  // set from arena_.
  void bind_descriptors(const Pipeline& p, std::vector<VkWriteDescriptorSet>& writes);
  // Fills bound_ with the views to bind: the given ones, except storage views on offsets the
  // device cannot bind, which are copied into staging_ ranges (and listed in copy_back_ when the
  // shader writes them).
  void stage_bindings(const Pipeline& p, std::initializer_list<TensorView> bindings);
  // The descriptor writes of bound_ for p (in scratch_writes_, pointing into scratch_infos_ and
  // scratch_views_) and the ranges the dispatch reads and writes through them (scratch_reads_,
  // scratch_writes_ranges_).
  void describe_bindings(const Pipeline& p);

  Context& ctx_;
  bool profile_;
  // ContextOptions::batch_limit: after that many commands, submit, wait and go on recording;
  // timings accumulate over the batches.
  uint32_t batch_limit_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  std::unique_ptr<DescriptorArena> arena_;   // devices without VK_KHR_push_descriptor
  std::unique_ptr<BindingStaging> staging_;  // made on the first view the device cannot bind
  std::vector<TensorView> bound_;
  std::vector<CopyRegion> copy_in_, copy_back_;
  uint32_t query_capacity_ = 0;
  uint32_t queries_used_ = 0;
  bool recording_ = false, submitted_ = false;
  uint32_t command_count_ = 0, dispatch_count_ = 0, barrier_count_ = 0;
  uint32_t first_uses_ = 0;     // pipelines this batch runs for the first time (their compile time)
  bool carry_timings_ = false;  // the next wait() appends to timings_ (a batch-limit split happened)
  std::vector<Range> pending_reads_, pending_writes_;
  std::vector<std::pair<std::string, std::string>> labels_;  // (label, stage) per timestamp
  std::string stage_;
  std::vector<CommandTiming> timings_;
  // dispatch()'s descriptor writes and ranges, kept to reuse their storage.
  std::vector<VkDescriptorBufferInfo> scratch_infos_;
  std::vector<VkBufferView> scratch_views_;
  std::vector<VkWriteDescriptorSet> scratch_writes_;
  std::vector<Range> scratch_reads_, scratch_writes_ranges_;
};

}  // namespace vkspec
