#pragma once
// A SentencePiece model file (T5's spiece.model) through Debian's SentencePiece library: what
// Hugging Face's T5Tokenizer does with it, the library encoding the pieces; T5's only special
// token added by encode is </s> at the end. Errors name the file.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace vkspec::text {

class SentencePieceTokenizer {
 public:
  static SentencePieceTokenizer load(const std::string& path);
  SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept;
  SentencePieceTokenizer& operator=(SentencePieceTokenizer&&) noexcept;
  ~SentencePieceTokenizer();

  // The pieces' ids of text, then </s> (T5Tokenizer with add_special_tokens), at most max_ids:
  // longer texts are cut before </s>, as Hugging Face truncates.
  std::vector<int32_t> encode(std::string_view text, int64_t max_ids) const;
  int32_t eos_id() const;
  int32_t pad_id() const;
  int64_t vocab_size() const;
  const std::string& name() const { return path_; }

 private:
  SentencePieceTokenizer() = default;
  std::string path_;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
};

}  // namespace vkspec::text
