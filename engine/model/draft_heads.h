#pragma once
// Spatial draft heads (Hawk / SSD style) on a frozen GPT, as tools/vkspec_models.py DraftHeads:
// head k maps the base model's final hidden state h (after its final norm, GptOutputs::hidden)
// to logits_k = head(h + SiLU(W_k h + b_k)) with the base model's own image head (Gpt::project:
// LlamaGen's `output` matrix, Janus-Pro's gen_head). At the
// query that predicts image token n, horizontal head hj predicts n + j (same row) and vertical
// head vr predicts n + r W (same column); the file's metadata lists names and offsets.
// The heads' weights are stacked ([heads * dim, dim]) so that every head's inner layer runs as one
// matmul; logits_at() then projects just the (head, row) pairs a strategy will sample.
#include <string>
#include <utility>
#include <vector>

#include "engine/model/gpt.h"

namespace vkspec {

struct DraftHead {
  std::string name;  // "h1".."h4", "v1", "v2"
  int64_t offset;    // target position relative to the base's next token
  bool vertical;     // offset is a multiple of the grid width (same column)
};

class DraftHeads {
 public:
  // Loads heads trained on `base` (dim, vocabulary and grid must match) for at most max_rows
  // hidden rows per call.
  DraftHeads(Context& ctx, const std::string& path, const Gpt& base, int64_t max_rows = 64);

  const std::string& path() const { return path_; }
  const std::vector<DraftHead>& heads() const { return heads_; }
  // Index of the head with this name, -1 when absent.
  int index(const std::string& name) const;

  // Records logits f32 [rows, vocab] of head `k` for hidden f32 [rows, dim]; valid until the
  // next call of logits or logits_at.
  TensorView logits(CommandStream& s, int k, const TensorView& hidden);
  // Records logits f32 [picks, vocab] of chosen pairs (head k, row r of hidden f32 [rows, dim]),
  // row i for picks[i], each equal to what logits(k) gives for that row: every head's inner layer
  // on every row (one matmul), then the base's image head on the picked rows only,
  // which is where the cost lies. At most heads() * max_rows picks; valid until the next call.
  TensorView logits_at(CommandStream& s, const TensorView& hidden, const std::vector<std::pair<int, int64_t>>& picks);

 private:
  std::string path_;
  const Gpt& base_;
  int64_t max_rows_;
  std::vector<DraftHead> heads_;
  Tensor w_, b_;                  // stacked weights [heads * dim, dim] (nn.Linear layout), biases [heads * dim]
  Tensor inner_;                  // [max_rows, heads * dim]: every head's SiLU(W h + b)
  Tensor picked_h_, picked_act_;  // [heads * max_rows, dim]: gathered rows for logits_at
  Tensor logits_;                 // [heads * max_rows, vocab]
};

}  // namespace vkspec
