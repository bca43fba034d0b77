#include "engine/vk/pipeline_table.h"

#include <algorithm>

namespace vkspec {

PipelineTable::PipelineTable(VkDevice device, VkPipelineCache cache, uint32_t full_subgroup_size, bool push_descriptors,
                             bool coopmat_khr)
    : device_(device),
      cache_(cache),
      full_subgroup_size_(full_subgroup_size),
      push_descriptors_(push_descriptors),
      coopmat_khr_(coopmat_khr),
      heads_(new std::atomic<const Variant*>[embedded_shader_count()]) {
  for (size_t i = 0; i < embedded_shader_count(); ++i) heads_[i].store(nullptr, std::memory_order_relaxed);
}

PipelineTable::~PipelineTable() = default;

const PipelineTable::Variant* PipelineTable::find(const Variant* v, std::initializer_list<uint32_t> spec) {
  for (; v; v = v->next)
    if (v->spec.size() == spec.size() && std::equal(spec.begin(), spec.end(), v->spec.begin())) return v;
  return nullptr;
}

const Pipeline& PipelineTable::get(ShaderId shader, std::initializer_list<uint32_t> spec) {
  std::atomic<const Variant*>& head = heads_[shader.index];
  // Acquire pairs with the release below: a published variant is seen fully built, and so are
  // the older ones it links to (each was published under the mutex before it).
  if (const Variant* v = find(head.load(std::memory_order_acquire), spec)) return *v->pipeline;
  std::lock_guard<std::mutex> lock(build_mutex_);
  const Variant* first = head.load(std::memory_order_relaxed);
  if (const Variant* v = find(first, spec)) return *v->pipeline;  // another thread built it meanwhile
  auto variant = std::make_unique<Variant>();
  variant->spec.assign(spec.begin(), spec.end());
  variant->pipeline = std::make_unique<Pipeline>(device_, cache_, shader, variant->spec, full_subgroup_size_,
                                                 push_descriptors_, coopmat_khr_);
  variant->next = first;
  variants_.push_back(std::move(variant));
  head.store(variants_.back().get(), std::memory_order_release);
  return *variants_.back()->pipeline;
}

}  // namespace vkspec
