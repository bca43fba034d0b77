#pragma once
// Janus-Pro model files with generated weights, built in memory in the layout
// tools/convert_janus.py writes: benchmark models at Janus-Pro-1B and -7B's shapes without a
// download (vkspec bench --synthetic janus-pro-1b), and the tests' tiny random Janus models. They
// load through the same reader and family as a converted checkpoint. No tokenizer is named, so
// they take prompt conditions built from embeddings (tests), not text.
#include <cstdint>
#include <string>

#include "engine/model/synthetic_gpt.h"

namespace vkspec {

struct JanusShape {
  int64_t dim = 0, n_layer = 0, n_head = 0, ffn_hidden = 0, text_vocab = 0, image_vocab = 0, grid = 0;
  int64_t image_embed_dim = 8, head_hidden = 0, prompt_tokens = 0;
};

// Janus-Pro-1B (24 layers x 2048, FFN 5632) and -7B (30 x 4096, FFN 11008): text vocabulary
// 102400, VQ-16's 16384 image tokens on 24 x 24, gen_head hidden = dim; `prompt_tokens` condition
// positions. Throws Error for another name.
JanusShape janus_pro_shape(const std::string& name, int64_t prompt_tokens);
// Whether `name` is one janus_pro_shape knows.
bool is_janus_pro_shape(const std::string& name);

// Every tensor and metadata key of a converted Janus-Pro of `shape`, calling `fill` once per tensor
// (is_norm for RMSNorm weights and biases, stored f32); matrices as `matrices`. Special token ids
// are the text vocabulary's last three (BOS, pad, <begin_of_image>).
SafetensorsWriter synthetic_janus(const JanusShape& shape, const WeightFill& fill, StDType matrices = StDType::F16);

}  // namespace vkspec
