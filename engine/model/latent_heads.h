#pragma once
// SSD's latent heads (Xiang et al. 2026) on a frozen GPT, as tools/vkspec_models.py LatentHeads:
// they predict hidden states, not tokens. h(n) is the base model's final hidden state after its
// final norm at the query whose logits predict image token n (GptOutputs::hidden). Head `h` maps
// h(n) to a prediction of h(n + 1) (next column), head `v` to one of h(n + W) (next row, same
// column); each is `depth` residual blocks y = x + fc2(SiLU(fc1 x + b1)) + b2. They apply
// recursively (a predicted state is a valid input), and a predicted state's token logits are the
// base model's own image head (Gpt::project) applied to it, per CFG row, combined like the base's.
#include <string>

#include "engine/model/gpt.h"

namespace vkspec {

class LatentHeads {
 public:
  enum class Axis { Horizontal, Vertical };

  // Loads heads trained on `base` (dim, vocabulary and grid must match) for at most max_rows
  // states per call.
  LatentHeads(Context& ctx, const std::string& path, const Gpt& base, int64_t max_rows = 64);

  const std::string& path() const { return path_; }
  int64_t max_rows() const { return max_rows_; }
  // How far training unrolled each head (metadata rollout_h / rollout_v; 0 when not stated):
  // predictions further out were never trained.
  int64_t trained_rollout(Axis a) const { return a == Axis::Horizontal ? rollout_h_ : rollout_v_; }

  // Records out = head(in) for f32 [rows, dim] states, 1 <= rows <= max_rows. out may be in;
  // otherwise the two must not overlap.
  void apply(CommandStream& s, Axis a, const TensorView& in, const TensorView& out);
  // Records token logits f32 [rows, vocab] of f32 [rows, dim] states: the base's image head.
  void logits(CommandStream& s, const TensorView& states, const TensorView& out) const;

 private:
  struct Block {
    Tensor fc1_w, fc1_b, fc2_w, fc2_b;
  };
  void check_rows(const TensorView& t, const char* what) const;

  std::string path_;
  const Gpt& base_;
  int64_t max_rows_, rollout_h_ = 0, rollout_v_ = 0;
  std::vector<Block> h_, v_;
  Tensor inner_;  // f32 [max_rows, hidden]
  Tensor delta_;  // f32 [max_rows, dim]
};

}  // namespace vkspec
