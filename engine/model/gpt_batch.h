#pragma once
// The queries of one GPT forward, on the device. The same T queries run for every batch row
// (the CFG rows), except that condition queries embed each row's own condition (the conditional
// row's, or the model's null form for the unconditional one).
#include <cstdint>
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/condition.h"
#include "engine/model/gpt_config.h"
#include "engine/ops/attention_mask.h"
#include "engine/vk/context.h"

namespace vkspec {

class KvCache;
struct PlacedQueries;

// What the host says about a forward.
struct GptQueries {
  // Sequence position of each of the T queries: 0 .. cls_token_num - 1 are condition positions,
  // cls_token_num + n is image token n (RoPE row n / W, column n % W). Condition queries, if any,
  // come first.
  std::vector<int64_t> positions;
  // Image token fed at each non-condition query, in order (T - condition queries entries), for
  // each image of the batch in turn (images * (T - condition queries) entries).
  std::vector<uint32_t> tokens;
  // Images sharing the forward, each with its own tokens at the same positions (batched AR): batch
  // row b serves image b % images, so with CFG rows [0, images) are the images' conditional rows
  // and [images, 2 images) their null rows (the sampler's CfgLayout::Halves).
  int64_t images = 1;
  // Ragged (see ragged()): positions, slots and mask hold images * T entries, image by image,
  // each image's queries at positions, slots and a mask of their own.
  bool per_image = false;
  // KV slot each query writes its key and value to (distinct, < cache slots).
  std::vector<uint32_t> slots;
  // Which slots each query attends to (its own slot included, for causal attention).
  ops::PackedAttentionMask mask;
  // Condition per batch row, embedded by condition queries; nullptr = the null (unconditional)
  // form. Only read while a GptBatch is built from these queries. A caption's padding tokens
  // are hidden from every query but their own (LlamaGen's emb_masks at generation), in every
  // forward, each image's from its own caption (GptBatch gives a lockstep batch whose captions
  // differ in padding a mask per image); the null row takes the conditional row's (as LlamaGen does).
  std::vector<const Condition*> conditions;
  // The sequence index each query's RoPE takes, where it is not its position's
  // (GptConfig::rope_index): placed line breaks' queries (engine/model/line_breaks.h). Empty
  // otherwise.
  std::vector<int64_t> rope_index;

  int64_t count() const { return static_cast<int64_t>(positions.size()); }
  // Queries of each batch row: count(), or count() / images in a ragged batch.
  int64_t queries_per_row() const { return per_image ? count() / std::max<int64_t>(images, 1) : count(); }
  int64_t condition_count(int64_t cls_token_num) const;

  // The common causal case: queries at consecutive positions [first, first + n), slot =
  // position, each seeing every slot up to and including its own. tokens: the image tokens fed
  // at the non-condition positions, in order, for each of `images` images in turn.
  static GptQueries causal(const GptConfig& cfg, int64_t first, int64_t n, const std::vector<uint32_t>& tokens,
                           const std::vector<const Condition*>& conditions, int64_t cache_slots, int64_t images = 1);
  // One forward for several images at positions of their own (batched speculative decoding):
  // each entry one image's queries (conditions: its own row, or its row and the null row with
  // CFG), all with the same number of queries and of condition queries, and with CFG all or none.
  static GptQueries ragged(const std::vector<GptQueries>& images);
  // Queries at any sequence positions (condition positions first), slot = position; query i sees
  // its own slot and every slot s below its position with sees(i, s). tokens: one per image query.
  static GptQueries at_positions(const GptConfig& cfg, const std::vector<int64_t>& positions,
                                 const std::vector<uint32_t>& tokens, const std::vector<const Condition*>& conditions,
                                 int64_t cache_slots, const std::function<bool(int64_t, int64_t)>& sees);
};

// Device copies of GptQueries, in host-visible buffers a batch keeps and refills: a strategy's
// steps reuse the same few batches (TargetSession) instead of allocating per forward. The views
// returned are sized for the current queries. Keep the batch (and its contents) unchanged until
// the stream that used it has been waited on.
class GptBatch {
 public:
  // Empty buffers for up to max_queries queries of batch_rows rows against cache_slots slots;
  // assign() fills them.
  GptBatch(Context& ctx, const GptConfig& cfg, int64_t batch_rows, int64_t max_queries, int64_t cache_slots);
  // A batch holding exactly q.
  GptBatch(Context& ctx, const GptConfig& cfg, const GptQueries& q, int64_t batch_rows, int64_t cache_slots);
  GptBatch(const GptBatch&) = delete;
  GptBatch& operator=(const GptBatch&) = delete;

  GptBatch(GptBatch&&) = delete;
  ~GptBatch();

  // Validates q (throws Error naming the problem) and writes it to the buffers, which grow when
  // q needs more room.
  void assign(const GptQueries& q);

  // The batch a forward runs against `cache`: this one, or for a model with placed line breaks
  // (GptConfig::line_breaks) the queries with their breaks (engine/model/line_breaks.h), which it
  // makes and keeps until the next call. placed_runs(): how that batch's ids and output rows map
  // to this one's (nullptr without breaks).
  const GptBatch& placed(const KvCache& cache) const;
  const PlacedQueries* placed_runs() const { return placed_runs_.get(); }

  int64_t tokens_per_row() const { return t_; }
  int64_t images() const { return images_; }
  // Queries per batch row the forward's kernels are chosen for: a strategy's most (set by its
  // TargetSession), so that a forward of fewer, alone or padded beside other images' queries,
  // runs the same kernels and each query's result is the same bits. At least tokens_per_row().
  int64_t plan_queries() const { return std::max(plan_queries_, t_); }
  void set_plan_queries(int64_t queries) { plan_queries_ = queries; }
  // One image's rows as every matmul of the forward picks its kernel for (its batch rows times
  // plan_queries()).
  int64_t plan_rows_per_image() const { return b_ / images_ * plan_queries(); }
  // Condition queries of the images that have them (0 when none has). Every image has them, or
  // in a ragged batch just the images at their first step: condition_queries(image) is 0 or this.
  int64_t condition_queries() const { return n_cond_; }
  int64_t condition_queries(int64_t image) const {
    return cond_of_.size() == 1 ? cond_of_[0] : cond_of_[static_cast<size_t>(image)];
  }
  // Where an image's ids start in token_ids().
  int64_t token_offset(int64_t image) const { return token_off_[static_cast<size_t>(image)]; }
  int64_t batch_rows() const { return b_; }
  int64_t cache_slots() const { return cache_slots_; }
  int64_t kv_len() const { return kv_len_; }  // 1 + the highest slot any query may see
  // Image token ids (u32), image by image: T - condition_queries(image) each (at least one id in
  // all). Host-visible:
  // a strategy may also write the ids here, or copy GPU-sampled tokens into it within the stream,
  // before the forward reads it.
  TensorView token_ids() const { return tokens_.view().rows(0, std::max<int64_t>(token_count_, 1)); }
  // c2i: the class id of a batch row (u32 [1]; num_classes for the null class).
  TensorView label_ids(int64_t row) const { return labels_[static_cast<size_t>(row)].view(); }
  // t2i: whether a batch row takes the model's null caption, else its caption's values at the
  // condition queries' positions (f32 [condition queries, caption_dim]; zeros at padding).
  bool null_condition(int64_t row) const { return null_caption_[static_cast<size_t>(row)]; }
  TensorView caption_values(int64_t row) const { return captions_[static_cast<size_t>(row)].view().rows(0, n_cond_); }
  // t2i: the sequence positions of the condition queries (u32 [condition queries]).
  TensorView condition_positions() const { return condition_positions_.view().rows(0, n_cond_); }
  // [T] shared by the batch rows, or [B * T] (row b * T + t) in a ragged batch; mask() likewise.
  TensorView rope_positions() const { return positions_.view().rows(0, meta_rows_); }
  TensorView slots() const { return slots_.view().rows(0, meta_rows_); }
  ops::AttentionMask mask() const;

 private:
  // t unless it is too small for shape (rank and trailing dims equal, at least shape[0] rows).
  void ensure(Tensor& t, DType dtype, const Shape& shape, const std::string& name);
  // assign()'s parts: the counts checked (images_, t_, n_cond_ set), then the uploads.
  void check_shape(const GptQueries& q);
  void count_condition_queries(const GptQueries& q);  // n_cond_, cond_of_, cond_first_, token_off_
  void upload_queries(const GptQueries& q, const std::vector<int32_t>& rope, const ops::PackedAttentionMask& mask,
                      bool rows_own);
  // t2i: the mask of each batch row's queries where a null form hides its own padding
  // (CaptionEmbeddings::own_mask), [B * T] queries; empty when the rows share their image's.
  ops::PackedAttentionMask row_masks(const GptQueries& q, const std::vector<std::vector<uint8_t>>& visible) const;
  void upload_conditions(const GptQueries& q, const std::vector<uint32_t>& labels,
                         const std::vector<const CaptionEmbeddings*>& captions);

  Context& ctx_;
  GptConfig cfg_;
  int64_t cache_slots_ = 0;
  int64_t t_ = 0, n_cond_ = 0, b_ = 0, kv_len_ = 0, images_ = 1;
  int64_t plan_queries_ = 0;
  int64_t meta_rows_ = 0;           // rows of positions, slots and mask: T, or B * T in a ragged batch
  std::vector<int64_t> cond_of_;    // condition queries per image (one entry when shared)
  int64_t cond_first_ = 0;          // index of the first query of the first image with condition queries
  std::vector<int64_t> token_off_;  // per image: its first id in token_ids()
  int64_t token_count_ = 0;
  bool has_bits_ = false;
  Tensor tokens_, positions_, slots_;
  std::vector<Tensor> labels_;    // c2i, one per batch row so each binding starts aligned
  std::vector<Tensor> captions_;  // t2i, one per batch row
  std::vector<bool> null_caption_;
  Tensor condition_positions_;
  ops::AttentionMaskTensors mask_;
  // Placed line breaks: the method's queries as given, and the batch with the breaks added.
  bool holds_placed_ = false;  // this is a placed batch (its queries include the breaks)
  std::unique_ptr<GptQueries> source_;
  mutable std::unique_ptr<GptBatch> placed_;
  mutable std::unique_ptr<PlacedQueries> placed_runs_;
};

}  // namespace vkspec
