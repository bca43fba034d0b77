#pragma once
// LlamaGen-layout GPT checkpoints with generated weights, built in memory: benchmark models at
// LlamaGen's B/L/XL shapes without downloading a checkpoint, and the tests' tiny random models.
// They load through the same reader and loader as a real checkpoint
// (SafetensorsFile(name, writer.take_bytes()) -> Gpt), so no model code is duplicated.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/model/safetensors_writer.h"

namespace vkspec {

struct GptShape {
  int64_t dim = 0, n_layer = 0, n_head = 0, vocab_size = 0, num_classes = 0, grid_size = 0, ffn_hidden = 0;
  // caption_dim > 0: a text-to-image GPT (LlamaGen's t2i: caption MLP and learned null caption
  // instead of the class table) with cls_token_num caption positions.
  int64_t caption_dim = 0, cls_token_num = 1;
};

// LlamaGen's class-conditional GPTs (GPT_B, GPT_L, GPT_XL in its autoregressive/models/gpt.py):
// vocabulary 16384, 1000 classes, FFN width as LlamaGen computes it, on a grid x grid token image.
// Throws Error for another name.
GptShape llamagen_shape(const std::string& name, int64_t grid);

// Fills `values` (already sized) for one tensor. is_norm: an RMSNorm weight (stored f32).
using WeightFill = std::function<void(const std::string& name, bool is_norm, std::vector<float>& values)>;

// One tensor filled by `fill` (is_norm: stored F32, else as `matrices`): what synthetic_gpt and
// other families' synthetic files (engine/families/) build their tensors with.
void add_synthetic_tensor(SafetensorsWriter& w, const std::string& name, const std::vector<int64_t>& shape,
                          bool is_norm, const WeightFill& fill, StDType matrices);
// The trunk's per-layer tensors in LlamaGen's layout (both norms, wqkv, wo, w1, w3, w2 per layer),
// named `prefix`{l}.* (FlashAR's branch: "vertical.layers.").
void add_synthetic_blocks(SafetensorsWriter& w, int64_t dim, int64_t n_layer, int64_t ffn_hidden,
                          const WeightFill& fill, StDType matrices, const std::string& prefix = "layers.");

// Every tensor and metadata key a GPT of `shape` needs, in checkpoint order (embeddings, then per
// layer both norms, wqkv, wo, w1, w3, w2, then norm and output), calling `fill` once per tensor in
// that order. Matrices and embeddings are stored as `matrices`, norm weights as F32.
SafetensorsWriter synthetic_gpt(const GptShape& shape, const WeightFill& fill, StDType matrices = StDType::F16);

// Values like LlamaGen's initialisation (standard deviation 0.02; uniform, which is cheap enough
// for XL's 775M weights in seconds) and norm weights of 1. Deterministic in seed.
WeightFill llamagen_init_fill(uint64_t seed);
// llamagen_init_fill with every bias (a tensor named *.bias) 0: the families whose files carry
// biases (Janus-Pro's heads, Lumina-mGPT's q/k norms).
WeightFill zero_bias_init_fill(uint64_t seed);

}  // namespace vkspec
