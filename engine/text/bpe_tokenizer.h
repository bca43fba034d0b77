#pragma once
// A Hugging Face tokenizer.json with a BPE model (byte-level BPE: GPT-2, Llama 3, Qwen,
// DeepSeek's LLMs and the ones tools/ trains), encoding and decoding as Hugging Face's
// tokenizers library does, id for id. What a file asks for that is not implemented is refused
// at load with a vkspec::Error naming the file and the JSON key, never tokenized differently.
// Thread-safe: const methods may run concurrently; copies share the loaded tables.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vkspec::text {

class BpeTokenizer {
 public:
  // Reads a Hugging Face tokenizer.json; throws vkspec::Error naming the file and what is wrong
  // (missing, not JSON, model type not BPE, unsupported pre-tokenizer/normalizer/decoder, bad merges...).
  static BpeTokenizer load(const std::string& path);
  static BpeTokenizer from_json_text(const std::string& json_text, const std::string& name);
  // Hugging Face's encode(text, add_special_tokens): normalizer, added/special tokens split out first,
  // pre-tokenizer, BPE, then the post-processor (e.g. TemplateProcessing adding BOS) when add_special_tokens.
  // Throws when text is not valid UTF-8.
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true) const;
  // Hugging Face's decode(ids, skip_special_tokens): the decoder (ByteLevel etc.); throws on an id out of range
  // (where Hugging Face would skip it).
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;
  std::optional<int32_t> token_to_id(std::string_view token) const;  // vocab or added token
  std::string id_to_token(int32_t id) const;                         // throws when out of range
  int64_t vocab_size() const;                                        // largest id + 1 over vocab and added tokens
  bool is_special(int32_t id) const;                                 // an added token with "special": true
  const std::string& name() const;                                   // the path or name given

 private:
  struct Impl;
  explicit BpeTokenizer(std::shared_ptr<const Impl> impl);
  const std::string* token_of(int32_t id) const;

  std::shared_ptr<const Impl> impl_;
};

}  // namespace vkspec::text
