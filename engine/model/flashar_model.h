#pragma once
// FlashAR (Zhou et al., arXiv 2605.09430) on the engine: a GPT post-trained to emit a whole
// anti-diagonal of the token grid per forward, as tools/flashar_model.py defines it and
// assets/fmnist_flashar16.md documents; the backbone is a LlamaGen (c2i or t2i, the released
// recipes), a Janus-Pro or a Lumina-mGPT (ours: tools/flashar_janus.py, flashar_lumina.py).
// One file holds the fine-tuned backbone under the plain GPT's names (a converted Janus-Pro's:
// its text table, gen_embed, gen_aligner, gen_head, metadata and all), the vertical branch
// (`vertical.layers.{i}.*`, `vertical.norm.weight`, and the vertical head: the family's head
// under the prefix `vertical.`, LlamaGen's `vertical.output.weight`, Janus-Pro's
// `vertical.gen_head.output_mlp_projector.*` and `vertical.gen_head.vision_head.*`; made by the
// family's ModelFamilyDescriptor::make_head) and the gate: an MLP (`gate.fc1.weight`,
// `gate.fc2.weight`, `gate.fc2.bias`; flashar.gate_norm joint as the released `--hv-gate`, or
// per-head, the default of files without the key) or, with flashar.gate = constant,
// `gate.mix_logit` (g = its sigmoid: the released code's `--hv-mix`, or 0.5 as its t2i script
// mixes).
//
// The backbone's own head is the horizontal head H: the state at cell (r, c) predicts (r, c + 1).
// The branch's blocks read the residual stream entering backbone block s
// (flashar.vertical_start_layer), run beside the backbone's last blocks under the same queries
// and mask with a KV cache of their own, then their own norm and head: the vertical head V,
// (r, c) predicts (r + 1, c). The gate mixes the two heads' logits for a target with both a left
// and an upper neighbour (and the corner, from the last condition position): ops::flashar_fuse,
// on the device. With several condition positions (t2i's caption, Janus-Pro's prompt) the
// branch's cache holds them too: the strategy prefills both caches in the same forwards. With
// placed line breaks (Lumina-mGPT) the backbone and the branch run the placed batch: a row end's
// break rides in the forward of its diagonal, and its state stands for the row end's in both
// heads (so V of (r + 1, W - 1) is read at row r's break).
#include <memory>
#include <string>
#include <vector>

#include "engine/model/gpt.h"
#include "engine/ops/flashar_fuse.h"

namespace vkspec {

// The two heads' logits of one forward, device views valid until the next forward.
struct FlashArOutputs {
  TensorView h_logits;  // f32 [batch rows * T, vocab]: the backbone's head
  TensorView v_logits;  // f32 [batch rows * T, vocab]: the vertical branch's head
};

class FlashArModel {
 public:
  // The file's backbone is loaded with `options` (batch rows, queries, dtypes), the branch alike.
  FlashArModel(Context& ctx, const std::string& path, const GptOptions& options = {});

  const std::string& path() const { return backbone_->path(); }
  Gpt& backbone() { return *backbone_; }
  const Gpt& backbone() const { return *backbone_; }
  const GptConfig& config() const { return backbone_->config(); }
  int64_t gate_hidden() const { return gate_fc1_.shape()[0]; }
  ops::FlashArGateNorm gate_norm() const { return gate_norm_; }
  int64_t vertical_start() const { return start_; }
  int64_t vertical_layers() const { return static_cast<int64_t>(layers_.size()); }
  uint64_t weight_bytes() const { return backbone_->weight_bytes() + weight_bytes_; }

  // The branch's KV cache beside `backbone_cache` (same rows and slots).
  KvCache make_branch_cache(const KvCache& backbone_cache) const;

  // Records one forward of both: the backbone with the tap at the branch's start, then the
  // branch's blocks, norm and head, under the same batch (queries, positions, mask, slots).
  FlashArOutputs forward(CommandStream& s, const GptBatch& batch, const KvCache& backbone_cache,
                         const KvCache& branch_cache);
  // Records the fused logits of each row of `sources` (u32 [rows, 3]: H row, V row, kind) from a
  // forward's two heads with the file's gate (ops::flashar_fuse): fused f32 [rows, vocab], gates
  // f32 [rows] (the weight of H each row took).
  void fuse(CommandStream& s, const FlashArOutputs& heads, const TensorView& sources, const TensorView& fused,
            const TensorView& gates) const;

 private:
  void load_gate(WeightStore& ws, const std::string& path);

  Context& ctx_;
  std::unique_ptr<Gpt> backbone_;
  GptConfig branch_cfg_;  // the backbone's, with the branch's layer count
  int64_t start_ = 0;
  std::vector<GptBlockWeights> layers_;
  Tensor norm_, rope_table_, attn_ws_, logits_;
  Tensor hidden_;                    // f32 [R, dim]: each method query's branch state (with placed line breaks)
  std::unique_ptr<ImageHead> head_;  // the vertical head: the family's, under `vertical.`
  GptBlockActivations act_;
  Tensor gate_fc1_;  // f32 [P, 2 vocab]
  Tensor gate_fc2_;  // f32 [P + 1]: fc2's weights, then its bias
  ops::FlashArGateNorm gate_norm_ = ops::FlashArGateNorm::PerHead;
  uint64_t weight_bytes_ = 0;
};

}  // namespace vkspec
