#pragma once
// What an image is conditioned on. Every model also has a null (unconditional) form of its
// condition for classifier-free guidance: the model's own (LlamaGen: the extra class row, or the
// learned caption embedding), which a batch row asks for with no Condition at all, or one the
// condition derives (Janus-Pro: the prompt's ids with all but the first and last made padding),
// which null_form() gives.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/gpt_config.h"

namespace vkspec {

class Condition {
 public:
  virtual ~Condition() = default;
  // For messages and traces: "class 3", "caption embeddings a.npy (17 of 120 tokens)".
  virtual std::string describe() const = 0;
  // Throws Error when the model cannot take this condition (wrong kind, id out of range, shape).
  virtual void check(const GptConfig& cfg) const = 0;
  // The unconditional row's condition with classifier-free guidance; nullptr: the model's own.
  virtual const Condition* null_form() const { return nullptr; }
  // The text prompt this condition came from ("" for none), for traces and sample files.
  virtual const std::string& prompt() const {
    static const std::string none;
    return none;
  }
};

// A class id of a class-conditional model, in [0, num_classes).
class ClassLabel final : public Condition {
 public:
  explicit ClassLabel(int64_t id) : id_(id) {}
  int64_t id() const { return id_; }
  std::string describe() const override;
  void check(const GptConfig& cfg) const override;

 private:
  int64_t id_;
};

// Text-encoder outputs of one caption (LlamaGen: flan-t5-xl, [tokens, 2048] f32), with a mask of
// the tokens that are real (not padding). A model with cls_token_num condition positions takes
// the caption right-aligned, padding first, as LlamaGen samples and trains (left padding).
class CaptionEmbeddings final : public Condition {
 public:
  // values: [tokens, dim] row-major; valid: one 0/1 per token. `source` names it in messages.
  CaptionEmbeddings(std::string source, int64_t tokens, int64_t dim, std::vector<float> values,
                    std::vector<uint8_t> valid);
  // A .npy (LlamaGen's T5 pipeline saves [1, tokens, dim] f32 of the real tokens only) or a
  // .safetensors file with one F32/F16/BF16 tensor of that shape ([tokens, dim] also accepted).
  // A token whose values are all zero is padding (LlamaGen zeroes padded tokens before use).
  static CaptionEmbeddings load(const std::string& path);

  const std::string& source() const { return source_; }
  int64_t tokens() const { return tokens_; }
  int64_t dim() const { return dim_; }
  int64_t valid_tokens() const;
  const std::vector<float>& values() const { return values_; }
  const std::vector<uint8_t>& valid() const { return valid_; }

  // The caption at `positions` condition positions: [positions, dim] values with the tokens
  // right-aligned and zeros before them, and the matching 0/1 mask (needs tokens <= positions).
  std::vector<float> placed_values(int64_t positions) const;
  std::vector<uint8_t> placed_mask(int64_t positions) const;

  // A prompt's embeddings (Janus-Pro) carry the prompt's text and token ids, and their
  // unconditional form, of the same tokens and padding; throws when the shapes differ.
  void set_prompt(std::string prompt, std::vector<int32_t> ids, std::shared_ptr<const CaptionEmbeddings> null_form);
  const std::vector<int32_t>& prompt_ids() const { return prompt_ids_; }
  // As a null form: whether its CFG row hides its own padding (Lumina-mGPT's null row: the prompt
  // hidden, only the image start and size tokens seen) rather than the conditional row's, as
  // LlamaGen's null caption does. GptBatch then gives each CFG row a mask of its own.
  void set_own_mask(bool own) { own_mask_ = own; }
  bool own_mask() const { return own_mask_; }

  std::string describe() const override;
  void check(const GptConfig& cfg) const override;
  const Condition* null_form() const override { return null_form_.get(); }
  const std::string& prompt() const override { return prompt_; }

 private:
  std::string source_;
  std::shared_ptr<const CaptionEmbeddings> null_form_;
  std::string prompt_;
  std::vector<int32_t> prompt_ids_;
  bool own_mask_ = false;
  int64_t tokens_, dim_;
  std::vector<float> values_;
  std::vector<uint8_t> valid_;
};

// The conditions of a forward's batch rows: `cond` for the first and, with classifier-free
// guidance (rows == 2), the null form for the second.
std::vector<const Condition*> guided_rows(const Condition& cond, int64_t rows);

}  // namespace vkspec
