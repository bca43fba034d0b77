#pragma once
// Lumina-mGPT's prompt (Alpha-VLLM/Lumina-mGPT, inference_solver.py and generate_examples): the
// user's text in the released template ("Generate an image of {w}x{h} according to the following
// prompt:\n{prompt}"), tokenized without special tokens between BOS and the turn separator, then
// the image start and the height and width size tokens, which vkspec places rather than samples.
// The unconditional CFG row is the image start and size tokens alone: the same rows with the
// prompt hidden (CaptionEmbeddings::set_own_mask), which RoPE's shift invariance makes the
// released stream at positions 0, 1, 2 (docs/lumina.md).
#include <memory>
#include <string>
#include <vector>

#include "engine/model/condition.h"
#include "engine/model/safetensors.h"
#include "engine/text/bpe_tokenizer.h"

namespace vkspec {

class LuminaPrompts {
 public:
  // The layout ids, template, text table and sizes from a converted model file's metadata
  // (tools/convert_lumina.py); throws Error naming the file and key when one is missing or wrong.
  LuminaPrompts(std::shared_ptr<const SafetensorsFile> file, std::shared_ptr<const text::BpeTokenizer> tokenizer);

  // The condition's ids for `prompt`: BOS, the template's text, separator, image start, sizes.
  std::vector<int32_t> ids(const std::string& prompt) const;
  // The condition for a text prompt, with its unconditional form.
  std::shared_ptr<const Condition> condition(const std::string& prompt) const;
  // The condition of a prompt already tokenized (text_ids: the template's text, no specials):
  // for models without a tokenizer file (the tests' tiny models) and restated conditions.
  std::shared_ptr<const Condition> condition_of_text(const std::string& prompt,
                                                     const std::vector<int32_t>& text_ids) const;
  // Another model's prompt condition as this model takes it (its own size tokens and table);
  // nullptr for a condition that is not a prompt.
  std::shared_ptr<const Condition> restated(const Condition& c) const;

 private:
  std::shared_ptr<const SafetensorsFile> file_;
  std::shared_ptr<const text::BpeTokenizer> tokenizer_;
  std::string template_;
  int32_t bos_ = 0, sep_ = 0, image_start_ = 0, height_ = 0, width_ = 0;
  int64_t grid_ = 0, max_tokens_ = 0, dim_ = 0;
};

}  // namespace vkspec
