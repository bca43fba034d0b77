#include "engine/text/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include "common/error.h"

namespace vkspec::text {

SentencePieceTokenizer SentencePieceTokenizer::load(const std::string& path) {
  SentencePieceTokenizer t;
  t.path_ = path;
  t.sp_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = t.sp_->Load(path);
  if (!status.ok()) throw Error(path + ": not a SentencePiece model: " + status.ToString());
  if (t.sp_->eos_id() < 0) throw Error(path + ": the SentencePiece model has no </s> (T5's end of sequence)");
  return t;
}

SentencePieceTokenizer::SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer& SentencePieceTokenizer::operator=(SentencePieceTokenizer&&) noexcept = default;
SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::vector<int32_t> SentencePieceTokenizer::encode(std::string_view text, int64_t max_ids) const {
  if (max_ids < 1) throw Error(path_ + ": encoding into " + std::to_string(max_ids) + " ids");
  std::vector<int> pieces;
  const auto status = sp_->Encode(absl::string_view(text.data(), text.size()), &pieces);
  if (!status.ok()) throw Error(path_ + ": cannot encode the text: " + status.ToString());
  if (static_cast<int64_t>(pieces.size()) > max_ids - 1) pieces.resize(static_cast<size_t>(max_ids - 1));
  std::vector<int32_t> ids(pieces.begin(), pieces.end());
  ids.push_back(sp_->eos_id());
  return ids;
}

int32_t SentencePieceTokenizer::eos_id() const { return sp_->eos_id(); }
int32_t SentencePieceTokenizer::pad_id() const { return sp_->pad_id(); }
int64_t SentencePieceTokenizer::vocab_size() const { return sp_->GetPieceSize(); }

}  // namespace vkspec::text
