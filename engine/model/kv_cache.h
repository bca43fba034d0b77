#pragma once
// Keys and values of every layer for B batch rows (2 with classifier-free guidance) and S slots.
// Slots are owned by the decoding strategy: the usual layout puts sequence position p in slot p
// and scratch slots after seq_len for candidates that have no place yet (trees, islands).
// Committing or rolling back speculative tokens is bookkeeping of which slots a query may see
// (the attention mask); a rejected token's slot is simply overwritten by the next write.
#include <vector>

#include "engine/model/gpt_config.h"
#include "engine/vk/context.h"

namespace vkspec {

class KvCache {
 public:
  KvCache(Context& ctx, const GptConfig& cfg, int64_t batch, int64_t slots, DType dtype);

  int64_t batch() const { return batch_; }
  int64_t slots() const { return slots_; }
  DType dtype() const { return dtype_; }
  const Tensor& k(int64_t layer) const { return k_[static_cast<size_t>(layer)]; }
  const Tensor& v(int64_t layer) const { return v_[static_cast<size_t>(layer)]; }
  uint64_t bytes() const;

 private:
  int64_t batch_, slots_;
  DType dtype_;
  std::vector<Tensor> k_, v_;
};

}  // namespace vkspec
