#pragma once
// The pipelines one device has built, by shader id and specialization constants. Ops ask for one
// per dispatch, from the decode thread and the UI thread at once in the viewer: a lookup indexes
// the shader's slot and walks its short list of variants without a lock or an allocation; a
// missing variant is built under the table's mutex, so each is built once. Entries are never
// removed before the table is destroyed, which is what makes the lock-free walk safe.
#include <atomic>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <vector>

#include <volk.h>

#include "engine/vk/pipeline.h"
#include "engine/vk/shader_registry.h"

namespace vkspec {

class PipelineTable {
 public:
  // cache: the VkPipelineCache pipelines are built through (may be VK_NULL_HANDLE);
  // full_subgroup_size, push_descriptors, coopmat_khr: see Pipeline's constructor.
  PipelineTable(VkDevice device, VkPipelineCache cache, uint32_t full_subgroup_size, bool push_descriptors,
                bool coopmat_khr = false);
  ~PipelineTable();
  PipelineTable(const PipelineTable&) = delete;
  PipelineTable& operator=(const PipelineTable&) = delete;

  // spec[i] sets constant_id i (see SpecConstants). Throws Error when the shader lacks one.
  const Pipeline& get(ShaderId shader, std::initializer_list<uint32_t> spec);

 private:
  struct Variant {
    SpecConstants spec;
    std::unique_ptr<Pipeline> pipeline;
    const Variant* next = nullptr;  // older variants of the same shader
  };
  static const Variant* find(const Variant* head, std::initializer_list<uint32_t> spec);

  VkDevice device_;
  VkPipelineCache cache_;
  uint32_t full_subgroup_size_;
  bool push_descriptors_, coopmat_khr_;
  std::unique_ptr<std::atomic<const Variant*>[]> heads_;  // one list per embedded shader
  std::mutex build_mutex_;                                // held while building and publishing
  std::vector<std::unique_ptr<Variant>> variants_;        // owns every list entry
};

}  // namespace vkspec
