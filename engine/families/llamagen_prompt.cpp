#include "engine/families/llamagen_prompt.h"

#include <filesystem>

#include "common/error.h"
#include "engine/text/t5_caption.h"
#include "engine/model/safetensors.h"
#include "engine/model/text_table.h"

namespace vkspec {

LlamaGenPrompts::LlamaGenPrompts(Context& ctx, std::string model, std::string encoder, int64_t max_tokens,
                                 int64_t caption_dim)
    : ctx_(ctx),
      model_(std::move(model)),
      encoder_path_(std::move(encoder)),
      max_tokens_(max_tokens),
      caption_dim_(caption_dim) {
  if (!std::filesystem::exists(encoder_path_))
    throw Error(model_ + ": its text encoder " + encoder_path_ + " (metadata text_encoder) is missing");
}

LlamaGenPrompts::~LlamaGenPrompts() = default;

void LlamaGenPrompts::load() const {
  if (encoder_) return;
  auto encoder = std::make_unique<T5Encoder>(ctx_, encoder_path_);
  if (encoder->config().d_model != caption_dim_)
    throw Error(encoder_path_ + ": a T5 of width " + std::to_string(encoder->config().d_model) + ", but " + model_ +
                " takes captions of " + std::to_string(caption_dim_) + " values (caption_dim): not its text encoder");
  const SafetensorsFile& f = encoder->file();  // the encoder keeps its file open for the token table
  if (!f.has_meta("tokenizer"))
    throw Error(encoder_path_ +
                ": names no SentencePiece model (metadata tokenizer; convert_t5.py copies spiece.model)");
  const std::string sp = (std::filesystem::path(encoder_path_).parent_path() / f.meta("tokenizer")).string();
  if (!std::filesystem::exists(sp)) throw Error(encoder_path_ + ": its tokenizer " + sp + " is missing");
  auto tokenizer = std::make_unique<text::SentencePieceTokenizer>(text::SentencePieceTokenizer::load(sp));
  if (tokenizer->vocab_size() > encoder->config().vocab)
    throw Error(sp + ": " + std::to_string(tokenizer->vocab_size()) + " pieces, more than the encoder's vocabulary " +
                std::to_string(encoder->config().vocab) + ": not its tokenizer");
  tokenizer_ = std::move(tokenizer);
  encoder_ = std::move(encoder);
}

std::shared_ptr<const Condition> LlamaGenPrompts::condition(const std::string& given) const {
  const std::string prompt = stripped_prompt(given);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = made_.find(prompt); it != made_.end()) return it->second;
  load();
  const std::string text = text::t5_caption_text(prompt);
  if (text.empty()) throw Error("the prompt \"" + prompt + "\" is empty once cleaned as LlamaGen's T5 cleans captions");
  const std::vector<int32_t> ids = tokenizer_->encode(text, max_tokens_);
  const int64_t n = static_cast<int64_t>(ids.size());
  std::vector<float> rows = encoder_->encode(ids, std::vector<uint8_t>(ids.size(), 1));
  auto c = std::make_shared<CaptionEmbeddings>("prompt", n, caption_dim_, std::move(rows),
                                               std::vector<uint8_t>(ids.size(), 1));
  c->set_prompt(prompt, ids, nullptr);  // the unconditional row: the model's null caption
  made_.emplace(prompt, c);
  return c;
}

}  // namespace vkspec
