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
  // slots: the slots methods address. A model with placed line breaks (GptConfig::line_breaks)
  // gets more on the device, for the breaks' keys and values (engine/model/line_breaks.h).
  KvCache(Context& ctx, const GptConfig& cfg, int64_t batch, int64_t slots, DType dtype);

  int64_t batch() const { return batch_; }
  int64_t slots() const { return slots_; }
  int64_t device_slots() const { return device_slots_; }
  // The device slots of the sequence alone, without the scratch slots after it (at most
  // device_slots()): the same for every cache of the model whatever its scratch, so attention's
  // split is cut for them (AttentionOptions::split_slots).
  int64_t sequence_device_slots() const { return sequence_device_slots_; }
  // With placed line breaks: the sequence position last written to scratch slot `slot` (>=
  // seq_len) of batch row `row`, or -1; recorded as forwards are recorded, since whether a
  // visible scratch slot ends a grid row decides whether its break is visible too. Const, as
  // the keys and values themselves are written through a const cache.
  int64_t scratch_position(int64_t row, int64_t slot) const;
  void note_scratch_write(int64_t row, int64_t slot, int64_t position) const;
  DType dtype() const { return dtype_; }
  const Tensor& k(int64_t layer) const { return k_[static_cast<size_t>(layer)]; }
  const Tensor& v(int64_t layer) const { return v_[static_cast<size_t>(layer)]; }
  uint64_t bytes() const;

 private:
  int64_t batch_, slots_, device_slots_, seq_len_, sequence_device_slots_;
  DType dtype_;
  mutable std::vector<int64_t> scratch_positions_;  // [batch, slots - seq_len] with line breaks
  std::vector<Tensor> k_, v_;
};

}  // namespace vkspec
