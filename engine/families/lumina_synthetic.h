#pragma once
// Lumina-mGPT files with generated weights, built in memory in the layout tools/convert_lumina.py
// writes: benchmark models at the 7B's shapes (vkspec bench --synthetic lumina-mgpt-7b-768) and
// the tests' tiny random ones. No tokenizer is named: they take prompts already tokenized
// (LuminaPrompts::condition_of_text), not text.
#include <cstdint>
#include <string>

#include "engine/model/synthetic_gpt.h"

namespace vkspec {

struct LuminaShape {
  int64_t dim = 0, n_layer = 0, n_head = 0, ffn_hidden = 0, text_vocab = 0, image_codes = 0, grid = 0;
  int64_t qk_norm_groups = 1, prompt_tokens = 0;
  bool swin_norm = false;
};

// Lumina-mGPT-7B at 512 (32 x 32 tokens) or 768 px (48 x 48): 32 layers x 4096, FFN 11008, one
// q/k norm group, vocabulary 65536 with the VQGAN's 8192 codes; `prompt_tokens` condition
// positions. Throws Error for another name.
LuminaShape lumina_mgpt_shape(const std::string& name, int64_t prompt_tokens);
bool is_lumina_mgpt_shape(const std::string& name);

// Every tensor and metadata key of a converted Lumina-mGPT of `shape`, `fill` called once per
// tensor (is_norm for norm weights and biases, stored f32); matrices as `matrices`. The layout ids
// are Chameleon's (docs/lumina.md), so text_vocab must exceed 8804 + grid / 2.
SafetensorsWriter synthetic_lumina(const LuminaShape& shape, const WeightFill& fill, StDType matrices = StDType::F16);

}  // namespace vkspec
