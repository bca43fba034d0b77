#pragma once
// Host-side packing of per-query visible slot sets into attention's (ranges, bits) form.
#include <cstdint>
#include <vector>

#include "engine/ops/attention.h"
#include "engine/vk/context.h"

namespace vkspec::ops {

struct PackedAttentionMask {
  int64_t queries = 0, words = 0;  // words per query = ceil(slots / 32)
  std::vector<uint32_t> ranges;    // [queries, 2]: (dense_end, end)
  std::vector<uint32_t> bits;      // [queries, words]; empty when every query is a plain prefix
};

// Device copies of a packed mask; view() is what attention takes.
struct AttentionMaskTensors {
  Tensor ranges, bits;
  AttentionMask view() const { return {ranges.view(), bits.valid() ? bits.view() : TensorView{}}; }
};

class AttentionMaskBuilder {
 public:
  AttentionMaskBuilder(int64_t queries, int64_t slots);
  // Query q sees slots [0, len) (in addition to what it already sees).
  void see_prefix(int64_t q, int64_t len);
  void see(int64_t q, int64_t slot);
  void hide(int64_t q, int64_t slot);
  bool sees(int64_t q, int64_t slot) const;
  // dense_end = the longest fully visible prefix, end = the last visible slot + 1.
  PackedAttentionMask pack() const;
  // The visibility a packed mask describes, to edit it (slots: the builder's slot count).
  static AttentionMaskBuilder unpack(const PackedAttentionMask& m, int64_t slots);

 private:
  int64_t queries_, slots_;
  std::vector<uint8_t> visible_;  // [queries, slots]
};

AttentionMaskTensors upload_attention_mask(Context& ctx, const PackedAttentionMask& m);

}  // namespace vkspec::ops
