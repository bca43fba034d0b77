#pragma once
// Spatial draft heads (Hawk / SSD style) on a frozen GPT, as tools/vkspec_models.py DraftHeads:
// head k maps the base model's final hidden state h (after its final norm, GptOutputs::hidden)
// to logits_k = output(h + SiLU(W_k h + b_k)) with the base model's own `output` weight. At the
// query that predicts image token n, horizontal head hj predicts n + j (same row) and vertical
// head vr predicts n + r W (same column); the file's metadata lists names and offsets.
#include <string>
#include <vector>

#include "engine/model/gpt.h"

namespace vkspec {

struct DraftHead {
  std::string name;  // "h1".."h4", "v1", "v2"
  int64_t offset;    // target position relative to the base's next token
  bool vertical;     // offset is a multiple of the grid width (same column)
  Tensor w, b;       // [dim, dim] (nn.Linear layout), [dim]
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
  // next call for the same head.
  TensorView logits(CommandStream& s, int k, const TensorView& hidden);

 private:
  std::string path_;
  const Gpt& base_;
  int64_t max_rows_;
  std::vector<DraftHead> heads_;
  Tensor y_, act_;                  // [max_rows, dim] scratch
  std::vector<Tensor> logits_;      // per head [max_rows, vocab]
};

}  // namespace vkspec
