#include "engine/model/gpt_batch.h"

#include <algorithm>

#include "engine/model/line_breaks.h"
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

// Each image's padding mask over the condition positions (1 = visible), from its conditional
// row's caption (row g; the null row takes it too, as LlamaGen does); all visible without one.
std::vector<std::vector<uint8_t>> caption_masks(const GptConfig& cfg, int64_t images,
                                                const std::vector<const CaptionEmbeddings*>& captions) {
  std::vector<std::vector<uint8_t>> masks;
  for (int64_t g = 0; g < images; ++g) {
    const CaptionEmbeddings* c = captions[static_cast<size_t>(g)];
    masks.push_back(c ? c->placed_mask(cfg.cls_token_num)
                      : std::vector<uint8_t>(static_cast<size_t>(cfg.cls_token_num), 1));
  }
  return masks;
}

bool all_equal(const std::vector<std::vector<uint8_t>>& masks) {
  return std::all_of(masks.begin(), masks.end(), [&](const std::vector<uint8_t>& m) { return m == masks[0]; });
}

// q with its positions, slots and mask given per image (GptQueries::ragged's layout): what a
// lockstep batch becomes when its images' captions differ in their padding.
GptQueries per_image_copy(const GptQueries& q) {
  GptQueries r = q;
  r.per_image = true;
  r.positions.clear();
  r.slots.clear();
  r.mask.ranges.clear();
  r.mask.bits.clear();
  r.rope_index.clear();
  for (int64_t g = 0; g < q.images; ++g) {
    r.positions.insert(r.positions.end(), q.positions.begin(), q.positions.end());
    r.slots.insert(r.slots.end(), q.slots.begin(), q.slots.end());
    r.mask.ranges.insert(r.mask.ranges.end(), q.mask.ranges.begin(), q.mask.ranges.end());
    r.mask.bits.insert(r.mask.bits.end(), q.mask.bits.begin(), q.mask.bits.end());
    r.rope_index.insert(r.rope_index.end(), q.rope_index.begin(), q.rope_index.end());
  }
  r.mask.queries = r.count();
  return r;
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

namespace {

Error batch_error(const std::string& what) { return Error("GPT batch: " + what); }

// RoPE (row, col, flag) of every query, image by image in a ragged batch; checks the positions
// (within the sequence, each image's condition queries first: n_cond[image] of them).
std::vector<int32_t> rope_rows(const GptConfig& cfg, const GptQueries& q, int64_t per_image,
                               const std::vector<int64_t>& n_cond) {
  std::vector<int32_t> rope(static_cast<size_t>(3 * q.count()));
  for (int64_t i = 0; i < q.count(); ++i) {
    const int64_t p = q.positions[static_cast<size_t>(i)];
    if (p < 0 || p >= cfg.seq_len()) throw batch_error("position " + std::to_string(p) + " outside the sequence");
    const int64_t image = q.per_image ? i / per_image : 0;
    if ((i % per_image < n_cond[static_cast<size_t>(image)]) != (p < cfg.cls_token_num))
      throw batch_error(q.per_image ? "every image must have as many condition queries, first"
                                    : "condition queries must come first");
    const ops::RopePosition rp =
        q.rope_index.empty() ? cfg.rope_position(p)
                             : ops::sequence_position(q.rope_index[static_cast<size_t>(i)], cfg.rope_table_rows());
    rope[static_cast<size_t>(3 * i)] = rp.row;
    rope[static_cast<size_t>(3 * i + 1)] = rp.col;
    rope[static_cast<size_t>(3 * i + 2)] = rp.flag;
  }
  return rope;
}

// Each image's caption padding hidden from its queries but a query's own slot (t2i): one mask for
// every query, or (ragged) each image's for its own queries.
ops::PackedAttentionMask hide_caption_padding(const GptConfig& cfg, const GptQueries& q,
                                              const std::vector<std::vector<uint8_t>>& visible, int64_t slots) {
  const auto hidden = [](const std::vector<uint8_t>& v) {
    return std::find(v.begin(), v.end(), uint8_t{0}) != v.end();
  };
  if (std::none_of(visible.begin(), visible.end(), hidden)) return q.mask;
  ops::AttentionMaskBuilder mb = ops::AttentionMaskBuilder::unpack(q.mask, slots);
  const int64_t per_image = q.queries_per_row();
  for (int64_t i = 0; i < q.count(); ++i) {
    const std::vector<uint8_t>& v = visible[static_cast<size_t>(q.per_image ? i / per_image : 0)];
    for (int64_t p = 0; p < cfg.cls_token_num && p < slots; ++p)
      if (!v[static_cast<size_t>(p)] && q.slots[static_cast<size_t>(i)] != static_cast<uint32_t>(p)) mb.hide(i, p);
  }
  return mb.pack();
}

// Per-query rows of `width` values, given per query of q (T, or images x T), as the device reads
// them: [T] shared, or [B * T] with batch row b taking image b % images's block.
template <typename V>
std::vector<V> per_row(const std::vector<V>& values, size_t width, bool ragged, int64_t rows, int64_t images,
                       int64_t T) {
  if (!ragged) return values;
  std::vector<V> out;
  out.reserve(static_cast<size_t>(rows * T) * width);
  for (int64_t b = 0; b < rows; ++b) {
    const auto first = values.begin() + static_cast<std::ptrdiff_t>((b % images) * T * static_cast<int64_t>(width));
    out.insert(out.end(), first, first + static_cast<std::ptrdiff_t>(T * static_cast<int64_t>(width)));
  }
  return out;
}

}  // namespace

GptQueries GptQueries::ragged(const std::vector<GptQueries>& images) {
  if (images.empty()) throw batch_error("a ragged batch of no images");
  GptQueries q;
  q.images = static_cast<int64_t>(images.size());
  q.per_image = true;
  const size_t rows = images[0].conditions.size();
  std::vector<const Condition*> nulls;
  for (const GptQueries& im : images) {
    if (im.images != 1 || im.per_image) throw batch_error("a ragged batch is made of one-image queries");
    if (im.count() != images[0].count() || im.conditions.size() != rows || im.mask.words != images[0].mask.words)
      throw batch_error("the images of a ragged batch must have as many queries and batch rows");
    q.positions.insert(q.positions.end(), im.positions.begin(), im.positions.end());
    q.slots.insert(q.slots.end(), im.slots.begin(), im.slots.end());
    q.tokens.insert(q.tokens.end(), im.tokens.begin(), im.tokens.end());
    if (!im.rope_index.empty()) throw batch_error("a ragged batch is made of queries without breaks placed");
    q.conditions.push_back(im.conditions.at(0));
    if (rows == 2) nulls.push_back(im.conditions[1]);
  }
  q.conditions.insert(q.conditions.end(), nulls.begin(), nulls.end());
  // One mask over every image's queries: bits for all where any image has them.
  const bool bits =
      std::any_of(images.begin(), images.end(), [](const GptQueries& im) { return !im.mask.bits.empty(); });
  q.mask.queries = q.count();
  q.mask.words = images[0].mask.words;
  for (const GptQueries& im : images) {
    q.mask.ranges.insert(q.mask.ranges.end(), im.mask.ranges.begin(), im.mask.ranges.end());
    if (!bits) continue;
    if (im.mask.bits.empty())
      q.mask.bits.resize(q.mask.bits.size() + static_cast<size_t>(im.count() * im.mask.words), 0u);
    else
      q.mask.bits.insert(q.mask.bits.end(), im.mask.bits.begin(), im.mask.bits.end());
  }
  return q;
}

void GptBatch::check_shape(const GptQueries& q) {
  if (q.images < 1 || b_ % q.images != 0)
    throw batch_error(std::to_string(q.images) + " images for " + std::to_string(b_) + " batch rows");
  if (q.per_image && q.count() % q.images != 0)
    throw batch_error("a ragged batch's queries must split evenly by image");
  images_ = q.images;
  t_ = q.queries_per_row();
  if (t_ < 1) throw batch_error("no queries");
  if (static_cast<int64_t>(q.slots.size()) != q.count()) throw batch_error("slots and positions differ in count");
  if (static_cast<int64_t>(q.conditions.size()) != b_)
    throw batch_error(std::to_string(q.conditions.size()) + " conditions for " + std::to_string(b_) + " batch rows");
  if (q.mask.queries != q.count())
    throw batch_error("mask has " + std::to_string(q.mask.queries) + " queries, expected " + std::to_string(q.count()));
  count_condition_queries(q);
  if (static_cast<int64_t>(q.tokens.size()) != token_count_)
    throw batch_error(std::to_string(q.tokens.size()) + " tokens for " + std::to_string(token_count_) +
                      " image queries of " + std::to_string(images_) + " image(s)");
  for (uint32_t s : q.slots)
    if (s >= cache_slots_)
      throw batch_error("slot " + std::to_string(s) + " beyond the cache's " + std::to_string(cache_slots_));
  const int64_t ids = holds_placed_ ? cfg_.placed_id() + 1 : cfg_.vocab_size;  // a placed batch feeds breaks
  for (uint32_t t : q.tokens)
    if (t >= ids) throw batch_error("token id " + std::to_string(t) + " outside the vocabulary");
  if (!q.rope_index.empty() && (!holds_placed_ || static_cast<int64_t>(q.rope_index.size()) != q.count()))
    throw batch_error("RoPE indices are a placed batch's, one per query");
}

void GptBatch::count_condition_queries(const GptQueries& q) {
  // Each block's leading condition positions: one block shared by every image, or one per image
  // in a ragged batch, where images at their first step (condition queries) may share a forward
  // with images further on (none), as continuous batching has them.
  const int64_t blocks = q.per_image ? images_ : 1;
  n_cond_ = 0;
  cond_first_ = 0;
  cond_of_.assign(static_cast<size_t>(blocks), 0);
  for (int64_t g = 0; g < blocks; ++g) {
    int64_t n = 0;
    while (n < t_ && q.positions[static_cast<size_t>(g * t_ + n)] < cfg_.cls_token_num) ++n;
    if (n > 0 && n_cond_ > 0 && n != n_cond_)
      throw batch_error("the images of a ragged batch that have condition queries must have as many");
    if (n > 0 && n_cond_ == 0) {
      n_cond_ = n;
      cond_first_ = g * t_;
    }
    cond_of_[static_cast<size_t>(g)] = n;
  }
  if (!q.per_image) cond_of_.assign(static_cast<size_t>(images_), n_cond_);
  token_off_.clear();
  token_count_ = 0;
  for (int64_t n : cond_of_) {
    token_off_.push_back(token_count_);
    token_count_ += t_ - n;
  }
}

GptBatch::~GptBatch() = default;

void GptBatch::assign(const GptQueries& q) {
  const GptConfig& cfg = cfg_;
  check_shape(q);
  if (cfg.line_breaks && !holds_placed_) {  // the ids now; the rest once the cache is known (placed())
    kv_len_ = 0;
    for (int64_t i = 0; i < q.mask.queries; ++i)
      kv_len_ = std::max<int64_t>(kv_len_, q.mask.ranges[static_cast<size_t>(2 * i + 1)]);
    if (kv_len_ > cache_slots_) throw batch_error("mask reaches beyond the cache");
    ensure(tokens_, DType::U32, {std::max<int64_t>(token_count_, 1)}, "token ids");
    if (!q.tokens.empty()) ctx_.upload(tokens_, 0, q.tokens.data(), q.tokens.size() * 4);
    source_ = std::make_unique<GptQueries>(q);
    placed_runs_.reset();
    return;
  }
  std::vector<std::vector<uint8_t>> visible;
  if (cfg.model_type == ModelType::t2i) {
    std::vector<const CaptionEmbeddings*> conditional;
    for (int64_t g = 0; g < images_; ++g) conditional.push_back(caption_of(cfg, q.conditions[static_cast<size_t>(g)]));
    visible = caption_masks(cfg, images_, conditional);
    // Captions of other lengths hide other condition positions: a mask per image.
    if (!q.per_image && images_ > 1 && !all_equal(visible)) return assign(per_image_copy(q));
  }
  const std::vector<int32_t> rope = rope_rows(cfg, q, t_, cond_of_);
  const bool t2i = cfg.model_type == ModelType::t2i;
  std::vector<uint32_t> labels;
  std::vector<const CaptionEmbeddings*> captions;
  for (const Condition* c : q.conditions) {
    if (t2i)
      captions.push_back(caption_of(cfg, c));
    else
      labels.push_back(class_id(cfg, c));
  }
  if (t2i && n_cond_ > 0) {
    for (int64_t i = 0; i < q.count(); ++i)
      if (i % t_ < condition_queries(i / t_) &&
          q.slots[static_cast<size_t>(i)] != static_cast<uint32_t>(q.positions[static_cast<size_t>(i)]))
        throw batch_error("a condition query of a text-conditional model must write the slot of its position");
    const auto first = q.positions.begin() + cond_first_;
    for (int64_t g = 0; q.per_image && g < images_; ++g)  // one set of condition rows for all
      if (condition_queries(g) > 0 && !std::equal(first, first + n_cond_, q.positions.begin() + g * t_))
        throw batch_error("the images of a ragged batch must query the same condition positions");
  }
  const ops::PackedAttentionMask own = t2i ? row_masks(q, visible) : ops::PackedAttentionMask{};
  const bool rows_own = own.queries > 0;
  const ops::PackedAttentionMask mask = rows_own ? own
                                        : t2i    ? hide_caption_padding(cfg, q, visible, cache_slots_)
                                                 : q.mask;
  kv_len_ = 0;
  for (int64_t i = 0; i < mask.queries; ++i)
    kv_len_ = std::max<int64_t>(kv_len_, mask.ranges[static_cast<size_t>(2 * i + 1)]);
  if (kv_len_ > cache_slots_) throw batch_error("mask reaches beyond the cache");
  meta_rows_ = q.per_image || rows_own ? b_ * t_ : t_;
  upload_queries(q, rope, mask, rows_own);
  upload_conditions(q, labels, captions);
}

ops::PackedAttentionMask GptBatch::row_masks(const GptQueries& q,
                                             const std::vector<std::vector<uint8_t>>& visible) const {
  if (b_ != 2 * images_) return {};
  std::vector<std::vector<uint8_t>> rows = visible;  // the conditional rows', then the null rows'
  // Condition positions some query sees besides its own slot: where the rows' visibility could
  // matter (an EAGLE drafter's queries, say, see image positions only).
  std::vector<uint8_t> seen(static_cast<size_t>(cfg_.cls_token_num), 0);
  const ops::AttentionMaskBuilder mb =
      ops::AttentionMaskBuilder::unpack(q.mask, std::min(cache_slots_, 32 * q.mask.words));
  for (int64_t i = 0; i < q.count(); ++i)
    for (int64_t p = 0; p < cfg_.cls_token_num && p < cache_slots_; ++p)
      if (q.slots[static_cast<size_t>(i)] != static_cast<uint32_t>(p) && mb.sees(i, p))
        seen[static_cast<size_t>(p)] = 1;
  bool differ = false;
  for (int64_t g = 0; g < images_; ++g) {
    const auto* null = dynamic_cast<const CaptionEmbeddings*>(q.conditions[static_cast<size_t>(images_ + g)]);
    rows.push_back(null && null->own_mask() ? null->placed_mask(cfg_.cls_token_num) : visible[static_cast<size_t>(g)]);
    for (size_t p = 0; p < seen.size(); ++p)
      differ = differ || (seen[p] && rows.back()[p] != visible[static_cast<size_t>(g)][p]);
  }
  if (!differ) return {};
  // Every batch row's queries (its image's block in a ragged batch) spread to a block of their
  // own, each block under its row's visibility.
  GptQueries rowed;
  rowed.images = b_;
  rowed.per_image = true;
  const int64_t blocks = q.per_image ? images_ : 1;
  const auto spread = [&](const std::vector<uint32_t>& v, size_t width) {
    return per_row(v, width, true, b_, blocks, t_);
  };
  rowed.positions = per_row(q.positions, 1, true, b_, blocks, t_);
  rowed.slots = spread(q.slots, 1);
  rowed.mask.queries = b_ * t_;
  rowed.mask.words = q.mask.words;
  rowed.mask.ranges = spread(q.mask.ranges, 2);
  if (!q.mask.bits.empty()) rowed.mask.bits = spread(q.mask.bits, static_cast<size_t>(q.mask.words));
  return hide_caption_padding(cfg_, rowed, rows, cache_slots_);
}

void GptBatch::upload_queries(const GptQueries& q, const std::vector<int32_t>& rope,
                              const ops::PackedAttentionMask& mask, bool rows_own) {
  const bool ragged = q.per_image || rows_own;
  // The queries' own rows ([T], or [images T] ragged) spread to every batch row where needed.
  auto rows = [&](const auto& values, size_t width) {
    return per_row(values, width, ragged, b_, q.per_image ? images_ : 1, t_);
  };
  ensure(tokens_, DType::U32, {std::max<int64_t>(token_count_, 1)}, "token ids");
  if (!q.tokens.empty()) ctx_.upload(tokens_, 0, q.tokens.data(), q.tokens.size() * 4);
  const std::vector<int32_t> rope_rows_ = rows(rope, 3);
  ensure(positions_, DType::I32, {meta_rows_, 3}, "rope positions");
  ctx_.upload(positions_, 0, rope_rows_.data(), rope_rows_.size() * 4);
  const std::vector<uint32_t> slot_rows = rows(q.slots, 1);
  ensure(slots_, DType::U32, {meta_rows_}, "kv slots");
  ctx_.upload(slots_, 0, slot_rows.data(), slot_rows.size() * 4);
  // A mask per batch row is already [B * T].
  const std::vector<uint32_t> ranges = rows_own ? mask.ranges : rows(mask.ranges, 2);
  ensure(mask_.ranges, DType::U32, {meta_rows_, 2}, "attention ranges");
  ctx_.upload(mask_.ranges, 0, ranges.data(), ranges.size() * 4);
  has_bits_ = !mask.bits.empty();
  if (has_bits_) {
    const std::vector<uint32_t> bits = rows_own ? mask.bits : rows(mask.bits, static_cast<size_t>(mask.words));
    if (mask_.bits.valid() && mask_.bits.shape()[1] != mask.words) mask_.bits = Tensor();
    ensure(mask_.bits, DType::U32, {meta_rows_, mask.words}, "attention bits");
    ctx_.upload(mask_.bits, 0, bits.data(), bits.size() * 4);
  }
}

void GptBatch::upload_conditions(const GptQueries& q, const std::vector<uint32_t>& labels,
                                 const std::vector<const CaptionEmbeddings*>& captions) {
  labels_.resize(labels.size());
  for (size_t b = 0; b < labels.size(); ++b) {
    ensure(labels_[b], DType::U32, {1}, "label row " + std::to_string(b));
    ctx_.upload(labels_[b], 0, &labels[b], 4);
  }
  if (!captions.empty() && n_cond_ > 0) {
    const auto first = q.positions.begin() + cond_first_;
    std::vector<uint32_t> cond_pos(first, first + n_cond_);
    ensure(condition_positions_, DType::U32, {n_cond_}, "condition positions");
    ctx_.upload(condition_positions_, 0, cond_pos.data(), cond_pos.size() * 4);
  }
  captions_.resize(captions.size());
  null_caption_.assign(captions.size(), true);
  for (size_t b = 0; b < captions.size(); ++b) {
    if (!captions[b] || n_cond_ == 0) continue;
    null_caption_[b] = false;
    const int64_t cd = cfg_.caption_dim;
    const std::vector<float> placed = captions[b]->placed_values(cfg_.cls_token_num);
    std::vector<float> rows(static_cast<size_t>(n_cond_ * cd));
    for (int64_t i = 0; i < n_cond_; ++i)
      std::copy_n(placed.begin() + q.positions[static_cast<size_t>(cond_first_ + i)] * cd, cd, rows.begin() + i * cd);
    ensure(captions_[b], DType::F32, {n_cond_, cd}, "caption row " + std::to_string(b));
    ctx_.upload(captions_[b], 0, rows.data(), rows.size() * 4);
  }
}

const GptBatch& GptBatch::placed(const KvCache& cache) const {
  if (!cfg_.line_breaks || holds_placed_) return *this;
  if (!source_) throw batch_error("placed() before assign()");
  if (cache.slots() < cache_slots_)
    throw batch_error("a batch for " + std::to_string(cache_slots_) + " slots run against a cache of " +
                      std::to_string(cache.slots()));
  auto runs = std::make_unique<PlacedQueries>(place_line_breaks(cfg_, *source_, b_, cache));
  if (!placed_ || placed_->cache_slots_ != cache.device_slots()) {
    placed_ = std::make_unique<GptBatch>(ctx_, cfg_, b_, runs->queries.queries_per_row(), cache.device_slots());
    placed_->holds_placed_ = true;
  }
  placed_->assign(runs->queries);
  placed_->plan_queries_ = 2 * plan_queries();  // a break after each query at most
  placed_runs_ = std::move(runs);
  return *placed_;
}

ops::AttentionMask GptBatch::mask() const {
  return {mask_.ranges.view().rows(0, meta_rows_), has_bits_ ? mask_.bits.view().rows(0, meta_rows_) : TensorView{}};
}

}  // namespace vkspec
