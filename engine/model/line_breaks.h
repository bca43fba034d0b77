#pragma once
// Placed line breaks (Lumina-mGPT, docs/lumina.md): the model is fed a line-break token after the
// last image token of every grid row, a token no method draws. Methods keep addressing a W x H
// grid (image token n at method slot and position cls + n, scratch slots after the sequence); a
// forward of a family with GptConfig::line_breaks runs their queries with the breaks added:
//
// - Device slots follow the released sequence: method slot s < seq_len of image token n lives at
//   cls + n + n / W, so row r's break sits right after its last token (cls + r (W + 1) + W), and
//   a causal prefix of the grid is still a prefix on the device. Scratch slot seq_len + j lives at
//   P + 2 j (P = cls + H (W + 1)), with the break of whatever row end it holds at P + 2 j + 1. One
//   slot more at the end takes the writes of padding queries.
// - A query fed a row-end token is followed by a placed query fed the break (its key and value to
//   the break's slot, its RoPE index one past the row end's). Every query that sees a row-end slot
//   (but the row end itself) also sees the break after it. The state a method reads for the query
//   fed a row end is the placed query's: it predicts the next row's first token.
#include <cstdint>
#include <vector>

#include "engine/model/gpt_batch.h"
#include "engine/model/kv_cache.h"

namespace vkspec {

class LineBreakLayout {
 public:
  // method_slots: the slots methods address (seq_len + scratch).
  LineBreakLayout(const GptConfig& cfg, int64_t method_slots);

  int64_t device_slots() const { return sequence_ + 2 * scratch_ + 1; }
  int64_t trash_slot() const { return device_slots() - 1; }
  // The device slot of method slot s; its break's (when it holds a row end) is one past it.
  int64_t device_slot(int64_t slot) const;
  // Whether sequence position p is the last image token of a grid row.
  bool ends_row(int64_t position) const { return position >= cls_ && (position - cls_) % width_ == width_ - 1; }

 private:
  int64_t cls_, width_, seq_len_, sequence_, scratch_;
};

// A method's forward with its breaks placed.
struct PlacedQueries {
  GptQueries queries;  // slots and masks in device slots; rope_index set
  struct Run {
    int64_t from = 0, to = 0, count = 0;
  };
  // The method's token ids (GptBatch::token_ids order) to the placed batch's, which the forward
  // copies on the device (strategies may write the method's ids within the stream).
  std::vector<Run> ids;
  // Placed output rows to the method's rows, over all batch rows (row b * T + t).
  std::vector<Run> rows;
};

// q's queries with their breaks, against `cache` (whose record of what its scratch slots hold it
// updates with q's writes); throws Error when a query writes a sequence slot other than its
// position's, which the layout relies on.
PlacedQueries place_line_breaks(const GptConfig& cfg, const GptQueries& q, int64_t batch_rows, const KvCache& cache);

}  // namespace vkspec
