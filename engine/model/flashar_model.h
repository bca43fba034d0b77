#pragma once
// FlashAR (Zhou et al., arXiv 2605.09430) on the engine: a LlamaGen c2i GPT post-trained to emit a
// whole anti-diagonal of the token grid per forward, as tools/flashar_model.py defines it and
// assets/fmnist_flashar16.md documents. One file holds the fine-tuned backbone under a plain
// GPT's names, the vertical branch (`vertical.layers.{i}.*`, `vertical.norm.weight`,
// `vertical.output.weight`) and the gate (`gate.fc1.weight`, `gate.fc2.weight`, `gate.fc2.bias`).
//
// The backbone's own head is the horizontal head H: the state at cell (r, c) predicts (r, c + 1).
// The branch's blocks read the residual stream entering backbone block s
// (flashar.vertical_start_layer), run beside the backbone's last blocks under the same queries
// and mask with a KV cache of their own, then their own norm and output: the vertical head V,
// (r, c) predicts (r + 1, c). The gate mixes the two heads' logits for a target with both a left
// and an upper neighbour (and the corner, from the class token); it is small and runs on the host.
#include <memory>
#include <string>
#include <vector>

#include "engine/model/gpt.h"

namespace vkspec {

// The two heads' logits of one forward, device views valid until the next forward.
struct FlashArOutputs {
  TensorView h_logits;  // f32 [batch rows * T, vocab]: the backbone's head
  TensorView v_logits;  // f32 [batch rows * T, vocab]: the vertical branch's head
};

// The learned gate g = sigmoid(fc2(SiLU(fc1([z(H); z(V)])))), the weight of H in g H + (1 - g) V,
// with z(x) = clamp((x - mean x) / (rms(x - mean x) + 1e-6), -6, 6) over the vocabulary. On the host
// in f32, in the reference's order of operations.
class FlashArGate {
 public:
  FlashArGate(std::vector<float> fc1, std::vector<float> fc2, float bias, int64_t vocab);
  int64_t hidden() const { return hidden_; }
  // g for one target from the two heads' logits (vocab each).
  float weight(const float* h, const float* v) const;
  // out = g h + (1 - g) v, element by element as the reference computes it; returns g.
  float mix(const float* h, const float* v, float* out) const;

 private:
  std::vector<float> fc1_, fc2_;  // [hidden, 2 vocab], [hidden]
  float bias_;
  int64_t vocab_, hidden_;
};

class FlashArModel {
 public:
  // The file's backbone is loaded with `options` (batch rows, queries, dtypes), the branch alike.
  FlashArModel(Context& ctx, const std::string& path, const GptOptions& options = {});

  const std::string& path() const { return backbone_->path(); }
  Gpt& backbone() { return *backbone_; }
  const Gpt& backbone() const { return *backbone_; }
  const GptConfig& config() const { return backbone_->config(); }
  const FlashArGate& gate() const { return gate_; }
  int64_t vertical_start() const { return start_; }
  int64_t vertical_layers() const { return static_cast<int64_t>(layers_.size()); }
  uint64_t weight_bytes() const { return backbone_->weight_bytes() + weight_bytes_; }

  // The branch's KV cache beside `backbone_cache` (same rows and slots).
  KvCache make_branch_cache(const KvCache& backbone_cache) const;

  // Records one forward of both: the backbone with the tap at the branch's start, then the
  // branch's blocks, norm and head, under the same batch (queries, positions, mask, slots).
  FlashArOutputs forward(CommandStream& s, const GptBatch& batch, const KvCache& backbone_cache,
                         const KvCache& branch_cache);

 private:
  Context& ctx_;
  std::unique_ptr<Gpt> backbone_;
  GptConfig branch_cfg_;  // the backbone's, with the branch's layer count
  int64_t start_ = 0;
  std::vector<GptBlockWeights> layers_;
  Tensor norm_, output_, rope_table_, attn_ws_, logits_;
  GptBlockActivations act_;
  FlashArGate gate_;
  uint64_t weight_bytes_ = 0;
};

}  // namespace vkspec
