#include "engine/model/kv_cache.h"

#include <algorithm>

#include "common/error.h"
#include "engine/model/line_breaks.h"

namespace vkspec {

KvCache::KvCache(Context& ctx, const GptConfig& cfg, int64_t batch, int64_t slots, DType dtype)
    : batch_(batch),
      slots_(slots),
      device_slots_(slots),
      seq_len_(cfg.seq_len()),
      sequence_device_slots_(std::min(slots, seq_len_)),
      dtype_(dtype) {
  if (batch < 1 || slots < 1) throw Error("KV cache needs batch >= 1 and slots >= 1");
  if (cfg.line_breaks) {
    if (slots < cfg.seq_len())
      throw Error("KV cache of " + std::to_string(slots) +
                  " slots for a model with placed line breaks: it needs the "
                  "whole sequence (" +
                  std::to_string(cfg.seq_len()) + ")");
    device_slots_ = LineBreakLayout(cfg, slots).device_slots();
    sequence_device_slots_ = LineBreakLayout(cfg, seq_len_).device_slots();
    scratch_positions_.assign(static_cast<size_t>(batch * (slots - seq_len_)), -1);
  }
  if (dtype != DType::F32 && dtype != DType::F16) throw Error("KV cache dtype must be f32 or f16");
  for (int64_t l = 0; l < cfg.n_layer; ++l) {
    const std::string n = "kv cache layer " + std::to_string(l);
    k_.push_back(ctx.tensor(dtype, {batch, device_slots_, cfg.n_head, cfg.head_dim}, n + " keys"));
    v_.push_back(ctx.tensor(dtype, {batch, device_slots_, cfg.n_head, cfg.head_dim}, n + " values"));
  }
}

int64_t KvCache::scratch_position(int64_t row, int64_t slot) const {
  if (scratch_positions_.empty() || slot < seq_len_ || slot >= slots_ || row < 0 || row >= batch_) return -1;
  return scratch_positions_[static_cast<size_t>(row * (slots_ - seq_len_) + slot - seq_len_)];
}

void KvCache::note_scratch_write(int64_t row, int64_t slot, int64_t position) const {
  if (scratch_positions_.empty() || slot < seq_len_ || slot >= slots_ || row < 0 || row >= batch_) return;
  scratch_positions_[static_cast<size_t>(row * (slots_ - seq_len_) + slot - seq_len_)] = position;
}

uint64_t KvCache::bytes() const {
  uint64_t b = 0;
  for (size_t i = 0; i < k_.size(); ++i) b += k_[i].bytes() + v_[i].bytes();
  return b;
}

}  // namespace vkspec
