#include "engine/ops/attention_mask.h"

#include <algorithm>

namespace vkspec::ops {

AttentionMaskBuilder::AttentionMaskBuilder(int64_t queries, int64_t slots)
    : queries_(queries), slots_(slots), visible_(static_cast<size_t>(queries * slots), 0) {
  require(queries > 0 && slots >= 0 && slots < (int64_t{1} << 32), "attention mask",
          [&] { return "bad size " + std::to_string(queries) + " x " + std::to_string(slots); });
}

void AttentionMaskBuilder::see_prefix(int64_t q, int64_t len) {
  require(q >= 0 && q < queries_ && len >= 0 && len <= slots_, "attention mask", [&] {
    return "prefix " + std::to_string(len) + " of query " + std::to_string(q) + " outside " + std::to_string(queries_) +
           " x " + std::to_string(slots_);
  });
  std::fill_n(visible_.begin() + q * slots_, len, uint8_t{1});
}

void AttentionMaskBuilder::see(int64_t q, int64_t slot) {
  require(q >= 0 && q < queries_ && slot >= 0 && slot < slots_, "attention mask", [&] {
    return "slot " + std::to_string(slot) + " of query " + std::to_string(q) + " outside " + std::to_string(queries_) +
           " x " + std::to_string(slots_);
  });
  visible_[static_cast<size_t>(q * slots_ + slot)] = 1;
}

void AttentionMaskBuilder::hide(int64_t q, int64_t slot) {
  require(q >= 0 && q < queries_ && slot >= 0 && slot < slots_, "attention mask", [&] {
    return "slot " + std::to_string(slot) + " of query " + std::to_string(q) + " outside " + std::to_string(queries_) +
           " x " + std::to_string(slots_);
  });
  visible_[static_cast<size_t>(q * slots_ + slot)] = 0;
}

AttentionMaskBuilder AttentionMaskBuilder::unpack(const PackedAttentionMask& m, int64_t slots) {
  AttentionMaskBuilder b(m.queries, slots);
  for (int64_t q = 0; q < m.queries; ++q) {
    const int64_t dense = m.ranges[static_cast<size_t>(2 * q)], end = m.ranges[static_cast<size_t>(2 * q + 1)];
    require(dense <= end && end <= slots, "attention mask", [&] {
      return "packed ranges of query " + std::to_string(q) + " outside " + std::to_string(slots) + " slots";
    });
    b.see_prefix(q, dense);
    for (int64_t s = dense; s < end; ++s)
      if (m.bits[static_cast<size_t>(q * m.words + s / 32)] >> (s % 32) & 1u) b.see(q, s);
  }
  return b;
}

bool AttentionMaskBuilder::sees(int64_t q, int64_t slot) const {
  return visible_[static_cast<size_t>(q * slots_ + slot)] != 0;
}

PackedAttentionMask AttentionMaskBuilder::pack() const {
  PackedAttentionMask m;
  m.queries = queries_;
  m.words = (slots_ + 31) / 32;
  m.ranges.resize(static_cast<size_t>(queries_ * 2));
  bool need_bits = false;
  for (int64_t q = 0; q < queries_; ++q) {
    const uint8_t* row = &visible_[static_cast<size_t>(q * slots_)];
    const int64_t dense = std::find(row, row + slots_, uint8_t{0}) - row;
    int64_t end = slots_;
    while (end > dense && !row[end - 1]) --end;
    m.ranges[static_cast<size_t>(2 * q)] = static_cast<uint32_t>(dense);
    m.ranges[static_cast<size_t>(2 * q + 1)] = static_cast<uint32_t>(end);
    need_bits = need_bits || end > dense;
  }
  if (!need_bits) return m;
  m.bits.assign(static_cast<size_t>(queries_ * m.words), 0);
  for (int64_t q = 0; q < queries_; ++q)
    for (int64_t s = m.ranges[static_cast<size_t>(2 * q)]; s < m.ranges[static_cast<size_t>(2 * q + 1)]; ++s)
      if (sees(q, s)) m.bits[static_cast<size_t>(q * m.words + s / 32)] |= 1u << (s % 32);
  return m;
}

AttentionMaskTensors upload_attention_mask(Context& ctx, const PackedAttentionMask& m) {
  AttentionMaskTensors t;
  t.ranges = ctx.tensor(DType::U32, {m.queries, 2}, "attention ranges");
  ctx.upload(t.ranges, m.ranges.data(), m.ranges.size() * 4);
  if (!m.bits.empty()) {
    t.bits = ctx.tensor(DType::U32, {m.queries, m.words}, "attention bits");
    ctx.upload(t.bits, m.bits.data(), m.bits.size() * 4);
  }
  return t;
}

}  // namespace vkspec::ops
