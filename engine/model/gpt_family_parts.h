#pragma once
// The parts of a GPT forward that differ between model families (engine/model/model_family.h):
// what the condition positions embed, the image-token embedding table and a prompt's condition.
// Gpt owns one and calls it, and the family's ImageHead (image_head.h, made apart so FlashAR's
// vertical head is the same code under its own names); the blocks between are the
// family-independent LLaMA-style trunk (gpt_block.h).
#include <memory>
#include <string>

#include "engine/model/condition.h"
#include "engine/model/gpt_batch.h"
#include "engine/vk/command_stream.h"

namespace vkspec {

class GptFamilyParts {
 public:
  virtual ~GptFamilyParts() = default;

  // The image-token embedding table [vocab, dim] the forward gathers from (LlamaGen's
  // tok_embeddings; Janus's gen_aligner(gen_embed) computed once at load; Lumina-mGPT's with the
  // line break's row last, [vocab + 1, dim]).
  virtual const Tensor& token_embeddings() const = 0;
  // Records the embedding of batch row b's condition queries into rows [n_cond, dim].
  virtual void embed_condition(CommandStream& s, const GptBatch& batch, int64_t b, const TensorView& rows) = 0;
  // The condition for a text prompt, through the family's tokenizer and template; throws Error
  // saying what the family takes instead where it takes no prompts.
  virtual std::shared_ptr<const Condition> prompt_condition(const std::string& prompt) const = 0;
  // Whether prompt_condition takes a prompt (a family that reads text, or a LlamaGen t2i model
  // naming its text encoder).
  virtual bool takes_prompt() const { return false; }
  // A condition made for another model (the target's, when this one drafts for it) as this model
  // takes it, where the family embeds it itself (Janus-Pro: a prompt's rows of its own text
  // table); nullptr: it takes the condition as given.
  virtual std::shared_ptr<const Condition> own_condition(const Condition&) const { return nullptr; }
};

}  // namespace vkspec
