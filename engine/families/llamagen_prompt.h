#pragma once
// A prompt for LlamaGen's text-to-image GPTs, as autoregressive/sample/sample_t2i.py makes one:
// the text cleaned as language/t5.py's T5Embedder does (t5_caption.h), tokenized by T5's
// SentencePiece model with </s> and truncated to the model's condition positions (120), encoded
// by the T5 encoder on the engine; the valid rows moved to the end of the positions and the
// padding hidden and zeroed (CaptionEmbeddings' placement). Padding is not encoded: the mask
// hides it from every key, so the valid rows are the same without it. The unconditional row is
// the model's learned null caption. The encoder loads on the first prompt, and each prompt's
// embeddings are kept for the CFG rows, batches and repeats.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "engine/model/condition.h"
#include "engine/model/t5_encoder.h"
#include "engine/text/sentencepiece_tokenizer.h"
#include "engine/vk/context.h"

namespace vkspec {

class LlamaGenPrompts {
 public:
  // encoder: the T5 encoder file (vkspec.kind t5_encoder) whose metadata names its spiece.model
  // beside it; model: the GPT's path, for messages.
  LlamaGenPrompts(Context& ctx, std::string model, std::string encoder, int64_t max_tokens, int64_t caption_dim);
  ~LlamaGenPrompts();

  // Thread-safe; the same object for the same prompt.
  std::shared_ptr<const Condition> condition(const std::string& prompt) const;

 private:
  void load() const;

  Context& ctx_;
  std::string model_, encoder_path_;
  int64_t max_tokens_, caption_dim_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<T5Encoder> encoder_;
  mutable std::unique_ptr<text::SentencePieceTokenizer> tokenizer_;
  mutable std::map<std::string, std::shared_ptr<const Condition>> made_;
};

}  // namespace vkspec
