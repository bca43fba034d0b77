#include "engine/model/gpt_batch.h"

#include <algorithm>

#include "engine/ops/rope.h"
#include "common/error.h"

namespace vkspec {

namespace {

// The class-embedding row a batch row's condition queries look up (num_classes: the null class).
uint32_t class_id(const GptConfig& cfg, const Condition* c) {
  if (!c) return static_cast<uint32_t>(cfg.num_classes);
  c->check(cfg);
  const auto* label = dynamic_cast<const ClassLabel*>(c);
  if (!label) throw Error("GPT batch: a class-conditional model cannot take " + c->describe());
  return static_cast<uint32_t>(label->id());
}

const CaptionEmbeddings* caption_of(const GptConfig& cfg, const Condition* c) {
  if (!c) return nullptr;
  c->check(cfg);
  const auto* caption = dynamic_cast<const CaptionEmbeddings*>(c);
  if (!caption) throw Error("GPT batch: a text-conditional model cannot take " + c->describe());
  return caption;
}

// The padding mask over the condition positions all rows share (1 = visible).
std::vector<uint8_t> caption_mask(const GptConfig& cfg, const std::vector<const CaptionEmbeddings*>& captions) {
  std::vector<uint8_t> mask(static_cast<size_t>(cfg.cls_token_num), 1);
  bool first = true;
  for (const CaptionEmbeddings* c : captions) {
    if (!c) continue;
    const std::vector<uint8_t> m = c->placed_mask(cfg.cls_token_num);
    if (!first && m != mask)
      throw Error("GPT batch: the batch rows' captions differ in their padding (" + c->describe() +
                  "); rows share one attention mask");
    mask = m;
    first = false;
  }
  return mask;
}

}  // namespace

int64_t GptQueries::condition_count(int64_t cls_token_num) const {
  int64_t n = 0;
  while (n < count() && positions[static_cast<size_t>(n)] < cls_token_num) ++n;
  return n;
}

GptQueries GptQueries::causal(const GptConfig& cfg, int64_t first, int64_t n, const std::vector<uint32_t>& tokens,
                              const std::vector<const Condition*>& conditions, int64_t cache_slots, int64_t images) {
  GptQueries q;
  ops::AttentionMaskBuilder mb(n, cache_slots);
  size_t image_queries = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = first + i;
    q.positions.push_back(p);
    q.slots.push_back(static_cast<uint32_t>(p));
    mb.see_prefix(i, p + 1);
    if (p >= cfg.cls_token_num) ++image_queries;
  }
  if (images < 1) throw Error("GPT batch: " + std::to_string(images) + " images");
  const size_t needed = image_queries * static_cast<size_t>(images);
  if (tokens.size() < needed)
    throw Error("GPT batch: " + std::to_string(tokens.size()) + " tokens for " + std::to_string(image_queries) +
                " image queries of " + std::to_string(images) + " image(s)");
  q.tokens.assign(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(needed));
  q.images = images;
  q.mask = mb.pack();
  q.conditions = conditions;
  return q;
}

GptQueries GptQueries::at_positions(const GptConfig& cfg, const std::vector<int64_t>& positions,
                                    const std::vector<uint32_t>& tokens,
                                    const std::vector<const Condition*>& conditions, int64_t cache_slots,
                                    const std::function<bool(int64_t, int64_t)>& sees) {
  GptQueries q;
  const int64_t n = static_cast<int64_t>(positions.size());
  ops::AttentionMaskBuilder mb(n, cache_slots);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = positions[static_cast<size_t>(i)];
    if (p < 0 || p >= cache_slots) throw Error("GPT batch: position " + std::to_string(p) + " outside the cache");
    q.positions.push_back(p);
    q.slots.push_back(static_cast<uint32_t>(p));
    for (int64_t s = 0; s < p; ++s)
      if (sees(i, s)) mb.see(i, s);
    mb.see(i, p);
  }
  q.tokens = tokens;
  q.mask = mb.pack();
  q.conditions = conditions;
  return q;
}

GptBatch::GptBatch(Context& ctx, const GptConfig& cfg, int64_t batch_rows, int64_t max_queries, int64_t cache_slots)
    : ctx_(ctx), cfg_(cfg), cache_slots_(cache_slots), b_(batch_rows) {
  // Sized for the largest batch up front; assign() grows a buffer only past that.
  const int64_t T = std::max<int64_t>(max_queries, 1);
  ensure(tokens_, DType::U32, {T}, "token ids");
  ensure(positions_, DType::I32, {T, 3}, "rope positions");
  ensure(slots_, DType::U32, {T}, "kv slots");
  ensure(mask_.ranges, DType::U32, {T, 2}, "attention ranges");
}

GptBatch::GptBatch(Context& ctx, const GptConfig& cfg, const GptQueries& q, int64_t batch_rows, int64_t cache_slots)
    : ctx_(ctx), cfg_(cfg), cache_slots_(cache_slots), b_(batch_rows) {
  assign(q);
}

void GptBatch::ensure(Tensor& t, DType dtype, const Shape& shape, const std::string& name) {
  bool fits = t.valid() && t.shape().rank == shape.rank && t.shape()[0] >= shape[0];
  for (int d = 1; fits && d < shape.rank; ++d) fits = t.shape()[d] == shape[d];
  if (fits) return;  // rows beyond the current queries stay unread: views are sized per assign()
  Shape grown = shape;
  if (t.valid() && t.shape().rank == shape.rank) grown.dims[0] = std::max(shape[0], t.shape()[0]);
  t = ctx_.tensor(dtype, grown, name, MemoryUsage::Upload);
}

void GptBatch::assign(const GptQueries& q) {
  const GptConfig& cfg = cfg_;
  const int64_t cache_slots = cache_slots_;
  t_ = q.count();
  kv_len_ = 0;
  auto fail = [](const std::string& what) { return Error("GPT batch: " + what); };
  if (t_ < 1) throw fail("no queries");
  if (static_cast<int64_t>(q.slots.size()) != t_) throw fail("slots and positions differ in count");
  if (static_cast<int64_t>(q.conditions.size()) != b_)
    throw fail(std::to_string(q.conditions.size()) + " conditions for " + std::to_string(b_) + " batch rows");
  if (q.mask.queries != t_) throw fail("mask has " + std::to_string(q.mask.queries) + " queries, expected " +
                                       std::to_string(t_));
  if (q.images < 1 || b_ % q.images != 0)
    throw fail(std::to_string(q.images) + " images for " + std::to_string(b_) + " batch rows");
  images_ = q.images;
  n_cond_ = q.condition_count(cfg.cls_token_num);
  if (static_cast<int64_t>(q.tokens.size()) != images_ * (t_ - n_cond_))
    throw fail(std::to_string(q.tokens.size()) + " tokens for " + std::to_string(t_ - n_cond_) + " image queries of " +
               std::to_string(images_) + " image(s)");
  std::vector<int32_t> rope(static_cast<size_t>(3 * t_));
  for (int64_t i = 0; i < t_; ++i) {
    const int64_t p = q.positions[static_cast<size_t>(i)];
    if (p < 0 || p >= cfg.seq_len()) throw fail("position " + std::to_string(p) + " outside the sequence");
    if (i >= n_cond_ && p < cfg.cls_token_num) throw fail("condition queries must come first");
    const ops::RopePosition rp = ops::llamagen_position(p, cfg.cls_token_num, cfg.grid_size);
    rope[static_cast<size_t>(3 * i)] = rp.row;
    rope[static_cast<size_t>(3 * i + 1)] = rp.col;
    rope[static_cast<size_t>(3 * i + 2)] = rp.flag;
  }
  for (uint32_t s : q.slots)
    if (s >= cache_slots) throw fail("slot " + std::to_string(s) + " beyond the cache's " + std::to_string(cache_slots));
  for (uint32_t t : q.tokens)
    if (t >= cfg.vocab_size) throw fail("token id " + std::to_string(t) + " outside the vocabulary");
  const bool t2i = cfg.model_type == ModelType::t2i;
  std::vector<uint32_t> labels;
  std::vector<const CaptionEmbeddings*> captions;
  for (const Condition* c : q.conditions) {
    if (t2i) captions.push_back(caption_of(cfg, c));
    else labels.push_back(class_id(cfg, c));
  }
  ops::PackedAttentionMask mask = q.mask;
  if (t2i) {
    const std::vector<uint8_t> visible = caption_mask(cfg, captions);
    for (int64_t i = 0; i < n_cond_; ++i)
      if (q.slots[static_cast<size_t>(i)] != static_cast<uint32_t>(q.positions[static_cast<size_t>(i)]))
        throw fail("a condition query of a text-conditional model must write the slot of its position");
    if (std::find(visible.begin(), visible.end(), uint8_t{0}) != visible.end()) {
      ops::AttentionMaskBuilder mb = ops::AttentionMaskBuilder::unpack(q.mask, cache_slots);
      for (int64_t i = 0; i < t_; ++i)
        for (int64_t p = 0; p < cfg.cls_token_num && p < cache_slots; ++p)
          if (!visible[static_cast<size_t>(p)] && q.slots[static_cast<size_t>(i)] != static_cast<uint32_t>(p))
            mb.hide(i, p);
      mask = mb.pack();
    }
  }
  for (int64_t i = 0; i < t_; ++i) kv_len_ = std::max<int64_t>(kv_len_, mask.ranges[static_cast<size_t>(2 * i + 1)]);
  if (kv_len_ > cache_slots) throw fail("mask reaches beyond the cache");

  ensure(tokens_, DType::U32, {std::max<int64_t>(images_ * (t_ - n_cond_), 1)}, "token ids");
  if (!q.tokens.empty()) ctx_.upload(tokens_, 0, q.tokens.data(), q.tokens.size() * 4);
  ensure(positions_, DType::I32, {t_, 3}, "rope positions");
  ctx_.upload(positions_, 0, rope.data(), rope.size() * 4);
  ensure(slots_, DType::U32, {t_}, "kv slots");
  ctx_.upload(slots_, 0, q.slots.data(), q.slots.size() * 4);
  labels_.resize(labels.size());
  for (size_t b = 0; b < labels.size(); ++b) {
    ensure(labels_[b], DType::U32, {1}, "label row " + std::to_string(b));
    ctx_.upload(labels_[b], 0, &labels[b], 4);
  }
  if (t2i && n_cond_ > 0) {
    std::vector<uint32_t> cond_pos(q.positions.begin(), q.positions.begin() + n_cond_);
    ensure(condition_positions_, DType::U32, {n_cond_}, "condition positions");
    ctx_.upload(condition_positions_, 0, cond_pos.data(), cond_pos.size() * 4);
  }
  captions_.resize(captions.size());
  null_caption_.assign(captions.size(), true);
  for (size_t b = 0; b < captions.size(); ++b) {
    if (!captions[b] || n_cond_ == 0) continue;
    null_caption_[b] = false;
    const int64_t cd = cfg.caption_dim;
    const std::vector<float> placed = captions[b]->placed_values(cfg.cls_token_num);
    std::vector<float> rows(static_cast<size_t>(n_cond_ * cd));
    for (int64_t i = 0; i < n_cond_; ++i)
      std::copy_n(placed.begin() + q.positions[static_cast<size_t>(i)] * cd, cd, rows.begin() + i * cd);
    ensure(captions_[b], DType::F32, {n_cond_, cd}, "caption row " + std::to_string(b));
    ctx_.upload(captions_[b], 0, rows.data(), rows.size() * 4);
  }
  ensure(mask_.ranges, DType::U32, {t_, 2}, "attention ranges");
  ctx_.upload(mask_.ranges, 0, mask.ranges.data(), mask.ranges.size() * 4);
  has_bits_ = !mask.bits.empty();
  if (has_bits_) {
    if (mask_.bits.valid() && mask_.bits.shape()[1] != mask.words) mask_.bits = Tensor();
    ensure(mask_.bits, DType::U32, {t_, mask.words}, "attention bits");
    ctx_.upload(mask_.bits, 0, mask.bits.data(), mask.bits.size() * 4);
  }
}

ops::AttentionMask GptBatch::mask() const {
  return {mask_.ranges.view().rows(0, t_), has_bits_ ? mask_.bits.view().rows(0, t_) : TensorView{}};
}

}  // namespace vkspec
