#include "engine/vk/command_stream.h"

#include <algorithm>
#include <mutex>

#include "engine/vk/context.h"
#include "engine/vk/vulkan_error.h"

namespace vkspec {
namespace {

constexpr uint32_t kQueryCapacity = 8192;

bool overlaps(VkBuffer b, VkDeviceSize lo, VkDeviceSize hi, VkBuffer b2, VkDeviceSize lo2, VkDeviceSize hi2) {
  return b == b2 && lo < hi2 && lo2 < hi;
}

uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t saturating_mul(uint64_t a, uint64_t b) { return a && b > UINT64_MAX / a ? UINT64_MAX : a * b; }

// Throws when the dispatch's bindings or push constants differ from what the shader declares, or
// its grid exceeds the device's limits.
void check_dispatch_fits(const Pipeline& p, size_t n_bindings, uint32_t push_size, const DeviceCaps& caps, uint32_t gx,
                         uint32_t gy, uint32_t gz) {
  const auto& decl = p.bindings();
  if (n_bindings != decl.size())
    throw Error("dispatch " + p.name() + ": " + std::to_string(n_bindings) + " buffers given, shader has " +
                std::to_string(decl.size()));
  if (push_size != p.push_constant_size())
    throw Error("dispatch " + p.name() + ": push constants of " + std::to_string(push_size) +
                " bytes, shader declares " + std::to_string(p.push_constant_size()));
  if (gx > caps.max_workgroup_count[0] || gy > caps.max_workgroup_count[1] || gz > caps.max_workgroup_count[2])
    throw Error("dispatch " + p.name() + ": " + std::to_string(gx) + "x" + std::to_string(gy) + "x" +
                std::to_string(gz) + " workgroups exceed the device limit");
}

void check_texel_binding(const Pipeline& p, size_t i, const TensorView& v) {
  const TexelView& t = v.texels;
  if (!t.view || v.offset < t.begin || (v.offset - t.begin) % 16 || v.offset + v.bytes > t.begin + t.bytes)
    throw Error("dispatch " + p.name() + ": binding " + std::to_string(i) +
                " is a texel buffer but its tensor has no texel view covering it on a texel boundary");
}

// The bytes a storage-buffer descriptor of v covers.
VkDeviceSize storage_range(const Pipeline& p, size_t i, const TensorView& v, const DeviceCaps& caps) {
  if (v.offset % caps.min_storage_buffer_offset_alignment)
    throw Error("dispatch " + p.name() + ": binding " + std::to_string(i) + " offset " + std::to_string(v.offset) +
                " is not aligned to " + std::to_string(caps.min_storage_buffer_offset_alignment));
  // Ranges are rounded up to whole 16-byte vectors: shaders load f16 data as packed uvec4 and
  // f32 data as vec4, and a device with robust buffer access may return zero for a whole
  // vector that crosses the end of the range (NVIDIA does: a 65x36 f16 weight ends mid-vector).
  // The Allocator hands out 16-byte aligned ranges padded to 16 bytes, and views start on the
  // storage offset alignment, so the rounded range stays inside the buffer.
  VkDeviceSize range = (std::max<VkDeviceSize>(v.bytes, 4) + 15) / 16 * 16;
  // A device whose limit is no multiple of 16 (0xFFFFFFFF) keeps whole words at the limit.
  if (range > caps.max_storage_buffer_range) range = (std::max<VkDeviceSize>(v.bytes, 4) + 3) / 4 * 4;
  if (range > caps.max_storage_buffer_range)
    throw Error("dispatch " + p.name() + ": binding " + std::to_string(i) + " spans " + std::to_string(range >> 20) +
                " MiB, over the device's maxStorageBufferRange; the op must split it");
  return range;
}

}  // namespace

CommandStream::CommandStream(Context& ctx, bool profile)
    : ctx_(ctx), profile_(profile && ctx.caps().timestamps), batch_limit_(ctx.options().batch_limit) {
  VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = ctx.queue_family();
  vk_check(vkCreateCommandPool(ctx.device(), &pi, nullptr, &pool_), "vkCreateCommandPool");
  try {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    vk_check(vkAllocateCommandBuffers(ctx.device(), &ai, &cmd_), "vkAllocateCommandBuffers");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vk_check(vkCreateFence(ctx.device(), &fi, nullptr, &fence_), "vkCreateFence");
    if (profile_) {
      VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
      qi.queryCount = kQueryCapacity;
      vk_check(vkCreateQueryPool(ctx.device(), &qi, nullptr, &queries_), "vkCreateQueryPool");
      query_capacity_ = kQueryCapacity;
    }
    if (!ctx.caps().push_descriptor) arena_ = std::make_unique<DescriptorArena>(ctx.device());
  } catch (...) {
    if (fence_) vkDestroyFence(ctx.device(), fence_, nullptr);
    vkDestroyCommandPool(ctx.device(), pool_, nullptr);
    throw;
  }
}

CommandStream::~CommandStream() {
  if (submitted_) {
    // Never free a command buffer the GPU may still run; a failed wait leaves nothing better to do.
    try {
      wait();
    } catch (...) {
      vkDeviceWaitIdle(ctx_.device());
    }
  }
  if (queries_) vkDestroyQueryPool(ctx_.device(), queries_, nullptr);
  vkDestroyFence(ctx_.device(), fence_, nullptr);
  vkDestroyCommandPool(ctx_.device(), pool_, nullptr);
}

void CommandStream::begin_if_needed() {
  if (submitted_) throw Error("command stream: recording while a submission is pending; call wait() first");
  if (recording_) return;
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
  recording_ = true;
  command_count_ = 0;
  dispatch_count_ = 0;
  barrier_count_ = 0;
  first_uses_ = 0;
  pending_reads_.clear();
  pending_writes_.clear();
  labels_.clear();
  queries_used_ = 0;
  if (profile_) {
    vkCmdResetQueryPool(cmd_, queries_, 0, query_capacity_);
    vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, queries_used_++);
  }
}

void CommandStream::track(const std::vector<Range>& reads, const std::vector<Range>& writes) {
  bool conflict = false;
  for (const Range& r : reads)
    for (const Range& w : pending_writes_)
      conflict = conflict || overlaps(r.buffer, r.begin, r.end, w.buffer, w.begin, w.end);
  for (const Range& w : writes) {
    for (const Range& p : pending_writes_)
      conflict = conflict || overlaps(w.buffer, w.begin, w.end, p.buffer, p.begin, p.end);
    for (const Range& p : pending_reads_)
      conflict = conflict || overlaps(w.buffer, w.begin, w.end, p.buffer, p.begin, p.end);
  }
  if (conflict) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(cmd_, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
    ++barrier_count_;
    ctx_.count_work(WorkCounters::Barrier);
    pending_reads_.clear();
    pending_writes_.clear();
  }
  pending_reads_.insert(pending_reads_.end(), reads.begin(), reads.end());
  pending_writes_.insert(pending_writes_.end(), writes.begin(), writes.end());
}

void CommandStream::stamp(const std::string& label) {
  ++command_count_;
  if (profile_ && queries_used_ < query_capacity_) {  // beyond capacity: untimed, never an error
    vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, queries_used_++);
    labels_.push_back({label, stage_});
  }
  if (batch_limit_ && command_count_ >= batch_limit_) {
    submit_and_wait();
    carry_timings_ = true;
  }
}

void CommandStream::dispatch(const Pipeline& p, std::initializer_list<TensorView> bindings, const void* push,
                             uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz) {
  check_dispatch_fits(p, bindings.size(), push_size, ctx_.caps(), gx, gy, gz);
  // Staging first: its copies may end the batch (ContextOptions::batch_limit), and the dispatch
  // must then begin the next one.
  stage_bindings(p, bindings);
  begin_if_needed();
  describe_bindings(p);
  track(scratch_reads_, scratch_writes_ranges_);
  vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.handle());
  if (!scratch_writes_.empty()) bind_descriptors(p, scratch_writes_);
  if (push_size) vkCmdPushConstants(cmd_, p.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
  if (gx && gy && gz) {
    if (p.take_first_use()) {
      ++first_uses_;
      ctx_.count_first_use();
    }
    vkCmdDispatch(cmd_, gx, gy, gz);
    ++dispatch_count_;
    ctx_.count_work(WorkCounters::Dispatch);
  }
  stamp(p.name());
  if (!copy_back_.empty()) copy(copy_back_);
}

void CommandStream::describe_bindings(const Pipeline& p) {
  const auto& decl = p.bindings();
  const DeviceCaps& caps = ctx_.caps();
  // Members reused across dispatches: no allocation per dispatch once they have grown.
  std::vector<VkDescriptorBufferInfo>& infos = scratch_infos_;
  std::vector<VkBufferView>& views = scratch_views_;
  std::vector<VkWriteDescriptorSet>& writes = scratch_writes_;
  infos.assign(bound_.size(), VkDescriptorBufferInfo{});
  views.assign(bound_.size(), VK_NULL_HANDLE);
  writes.clear();
  scratch_reads_.clear();
  scratch_writes_ranges_.clear();
  size_t i = 0;
  for (const TensorView& v : bound_) {
    if (!v.buffer) throw Error("dispatch " + p.name() + ": binding " + std::to_string(i) + " has no buffer");
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstBinding = static_cast<uint32_t>(i);
    w.descriptorCount = 1;
    Range r{v.buffer, v.offset, 0};
    if (decl[i].texels) {
      // The descriptor exposes the whole view, so that is what the shader may read, what
      // synchronization tracks and what this access records; the shader offsets into it itself.
      check_texel_binding(p, i, v);
      r = {v.buffer, v.texels.begin, v.texels.begin + v.texels.bytes};
      views[i] = v.texels.view;
      w.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
      w.pTexelBufferView = &views[i];
    } else {
      const VkDeviceSize range = storage_range(p, i, v, caps);
      infos[i] = {v.buffer, v.offset, range};
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w.pBufferInfo = &infos[i];
      r.end = v.offset + range;
    }
    writes.push_back(w);
    if (decl[i].reads) scratch_reads_.push_back(r);
    if (decl[i].writes) scratch_writes_ranges_.push_back(r);
    ++i;
  }
}

void CommandStream::stage_bindings(const Pipeline& p, std::initializer_list<TensorView> bindings) {
  bound_.assign(bindings.begin(), bindings.end());
  copy_in_.clear();
  copy_back_.clear();
  const VkDeviceSize align = ctx_.caps().min_storage_buffer_offset_alignment;
  const auto& decl = p.bindings();
  for (size_t i = 0; i < bound_.size(); ++i) {
    const TensorView v = bound_[i];
    if (decl[i].texels || !v.buffer || align <= 1 || v.offset % align == 0) continue;
    if (!staging_) staging_ = std::make_unique<BindingStaging>(ctx_, align);
    // One staged copy per distinct view, so bindings that alias still alias.
    size_t same = 0;
    while (same < i && !(bindings.begin()[same].buffer == v.buffer && bindings.begin()[same].offset == v.offset &&
                         bindings.begin()[same].bytes == v.bytes))
      ++same;
    if (same < i && bound_[same].buffer != v.buffer) {
      bound_[i] = bound_[same];
    } else {
      bound_[i] = staging_->take(v);
      copy_in_.push_back({v, bound_[i]});
    }
    const auto staged_here = [&](const CopyRegion& c) {
      return c.src.buffer == bound_[i].buffer && c.src.offset == bound_[i].offset;
    };
    if (decl[i].writes && std::none_of(copy_back_.begin(), copy_back_.end(), staged_here))
      copy_back_.push_back({bound_[i], v});
  }
  // Taken before any copy is recorded: a copy may end the batch (ContextOptions::batch_limit),
  // which frees every staging range.
  if (!copy_in_.empty()) copy(copy_in_);
}

void CommandStream::bind_descriptors(const Pipeline& p, std::vector<VkWriteDescriptorSet>& writes) {
  if (!arena_) {
    vkCmdPushDescriptorSetKHR(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout(), 0, static_cast<uint32_t>(writes.size()),
                              writes.data());
    return;
  }
  const VkDescriptorSet set = arena_->allocate(p.set_layout());
  for (VkWriteDescriptorSet& w : writes) w.dstSet = set;
  vkUpdateDescriptorSets(ctx_.device(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout(), 0, 1, &set, 0, nullptr);
}

void CommandStream::copy(const TensorView& src, const TensorView& dst) { copy(std::vector<CopyRegion>{{src, dst}}); }

void CommandStream::copy(const std::vector<CopyRegion>& regions) {
  VkBuffer from = VK_NULL_HANDLE, to = VK_NULL_HANDLE;
  std::vector<VkBufferCopy> list;
  std::vector<Range> reads, writes;
  auto flush = [&] {
    if (list.empty()) return;
    begin_if_needed();
    track(reads, writes);
    vkCmdCopyBuffer(cmd_, from, to, static_cast<uint32_t>(list.size()), list.data());
    ctx_.count_work(WorkCounters::Transfer);
    list.clear();
    reads.clear();
    writes.clear();
    stamp("copy");  // last: with ContextOptions::batch_limit it may submit
  };
  auto hits = [](const std::vector<Range>& set, const Range& r) {
    for (const Range& x : set)
      if (overlaps(r.buffer, r.begin, r.end, x.buffer, x.begin, x.end)) return true;
    return false;
  };
  for (const CopyRegion& c : regions) {
    if (c.src.bytes != c.dst.bytes)
      throw Error("copy: source has " + std::to_string(c.src.bytes) + " bytes, destination " +
                  std::to_string(c.dst.bytes));
    if (c.src.bytes == 0) continue;
    const Range r{c.src.buffer, c.src.offset, c.src.offset + c.src.bytes};
    const Range w{c.dst.buffer, c.dst.offset, c.dst.offset + c.dst.bytes};
    // One command's regions run in no particular order, so they must be independent (and Vulkan
    // requires its sources and destinations not to overlap).
    if (c.src.buffer != from || c.dst.buffer != to || hits(writes, r) || hits(writes, w) || hits(reads, w)) flush();
    from = c.src.buffer;
    to = c.dst.buffer;
    VkBufferCopy* last = list.empty() ? nullptr : &list.back();
    if (last && last->srcOffset + last->size == r.begin && last->dstOffset + last->size == w.begin) {
      last->size += c.src.bytes;
      reads.back().end = r.end;
      writes.back().end = w.end;
    } else {
      list.push_back({r.begin, w.begin, c.src.bytes});
      reads.push_back(r);
      writes.push_back(w);
    }
  }
  flush();
}

void CommandStream::fill(const TensorView& dst, uint32_t word) {
  if (dst.bytes % 4 || dst.offset % 4) throw Error("fill: range must be whole 32-bit words");
  if (dst.bytes == 0) return;
  begin_if_needed();
  track({}, {{dst.buffer, dst.offset, dst.offset + dst.bytes}});
  vkCmdFillBuffer(cmd_, dst.buffer, dst.offset, dst.bytes, word);
  ctx_.count_work(WorkCounters::Transfer);
  stamp("fill");
}

void CommandStream::submit() {
  begin_if_needed();  // an empty batch is still a valid submit
  // Make every write visible to the host once the fence signals.
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
  vk_check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  recording_ = false;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  vk_check(vkResetFences(ctx_.device(), 1, &fence_), "vkResetFences");
  {
    std::lock_guard<std::mutex> lock(ctx_.queue_mutex());
    vk_check(vkQueueSubmit(ctx_.queue(), 1, &si, fence_), "vkQueueSubmit");
  }
  ctx_.count_work(WorkCounters::Submit);
  submitted_ = true;
}

void CommandStream::wait() {
  if (!submitted_) return;
  const ContextOptions& o = ctx_.options();
  const uint64_t timeout_ns = saturating_add(o.fence_timeout_ns, saturating_mul(first_uses_, o.first_use_allowance_ns));
  const VkResult r = vkWaitForFences(ctx_.device(), 1, &fence_, VK_TRUE, timeout_ns);
  if (r == VK_TIMEOUT)
    throw Error("GPU work did not finish within " + std::to_string(timeout_ns / 1000000) + " ms on " +
                ctx_.caps().name + " (" + std::to_string(first_uses_) +
                " first-use compiles allowed for; raise VKSPEC_FENCE_TIMEOUT_MS if this device is just slow)");
  submitted_ = false;
  vk_check(r, ("vkWaitForFences on " + ctx_.caps().name).c_str());
  if (!carry_timings_) timings_.clear();
  carry_timings_ = false;
  if (profile_ && queries_used_ > 1) {
    std::vector<uint64_t> ts(queries_used_);
    vk_check(vkGetQueryPoolResults(ctx_.device(), queries_, 0, queries_used_, ts.size() * 8, ts.data(), 8,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
             "vkGetQueryPoolResults");
    const uint64_t mask =
        ctx_.caps().timestamp_valid_bits >= 64 ? ~0ull : ((1ull << ctx_.caps().timestamp_valid_bits) - 1);
    for (uint32_t i = 1; i < queries_used_; ++i) {
      const uint64_t d = (ts[i] - ts[i - 1]) & mask;
      timings_.push_back({labels_[i - 1].first, static_cast<double>(d) * ctx_.caps().timestamp_period_ns * 1e-6,
                          labels_[i - 1].second});
    }
  }
  vk_check(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
  if (arena_) arena_->reset();  // the batch that used its sets has finished
  if (staging_) staging_->reset();
}

void CommandStream::submit_and_wait() {
  submit();
  wait();
}

double CommandStream::total_ms() const {
  double t = 0;
  for (const auto& c : timings_) t += c.ms;
  return t;
}

std::map<std::string, double> CommandStream::ms_by_stage() const {
  std::map<std::string, double> m;
  for (const auto& c : timings_) m[c.stage] += c.ms;
  return m;
}

KernelTimes CommandStream::ms_by_kernel() const {
  KernelTimes m;
  for (const auto& c : timings_) m[{c.stage, c.label}] += KernelTime{1, c.ms};
  return m;
}

}  // namespace vkspec
