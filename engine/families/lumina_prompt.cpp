#include "engine/families/lumina_prompt.h"

#include "common/error.h"
#include "engine/model/text_table.h"

namespace vkspec {

namespace {
constexpr const char* kTextTable = "text_embeddings.weight";
constexpr int64_t kLayoutTokens = 3;  // image start, height, width

std::string filled_template(std::string t, int64_t pixels, const std::string& prompt) {
  for (const char* key : {"{w}", "{h}"}) {
    const size_t at = t.find(key);
    if (at != std::string::npos) t.replace(at, 3, std::to_string(pixels));
  }
  t.replace(t.find("{prompt}"), 8, prompt);
  return t;
}
}  // namespace

LuminaPrompts::LuminaPrompts(std::shared_ptr<const SafetensorsFile> file,
                             std::shared_ptr<const text::BpeTokenizer> tokenizer)
    : file_(std::move(file)), tokenizer_(std::move(tokenizer)) {
  const SafetensorsFile& f = *file_;
  template_ = f.meta("prompt_template");
  if (template_.find("{prompt}") == std::string::npos)
    throw Error(f.path() + ": metadata prompt_template has no {prompt}");
  const int64_t text_vocab = f.meta_int("text_vocab_size"), patch = f.meta_int("size_patch");
  grid_ = f.meta_int("grid_size");
  max_tokens_ = f.meta_int("cls_token_num");
  dim_ = f.meta_int("dim");
  if (patch <= 0 || (grid_ * 16) % patch)
    throw Error(f.path() + ": metadata size_patch " + std::to_string(patch) + " does not divide the image's " +
                std::to_string(grid_ * 16) + " pixels");
  bos_ = static_cast<int32_t>(f.meta_int("bos_id"));
  sep_ = static_cast<int32_t>(f.meta_int("sep_id"));
  image_start_ = static_cast<int32_t>(f.meta_int("image_start_id"));
  height_ = width_ = static_cast<int32_t>(f.meta_int("size_base_id") + grid_ * 16 / patch);
  for (int32_t id : {bos_, sep_, image_start_, height_})
    if (id < 0 || id >= text_vocab) throw Error(f.path() + ": a layout token id outside the text vocabulary");
  if (tokenizer_ && tokenizer_->vocab_size() > text_vocab)
    throw Error(tokenizer_->name() + ": " + std::to_string(tokenizer_->vocab_size()) +
                " tokens, more than the model's text vocabulary " + std::to_string(text_vocab) + " (" + f.path() +
                "): the tokenizer is not this model's");
}

std::vector<int32_t> LuminaPrompts::ids(const std::string& given) const {
  if (!tokenizer_) throw Error(file_->path() + ": names no tokenizer (metadata tokenizer), so it cannot take a prompt");
  const std::string text = filled_template(template_, grid_ * 16, stripped_prompt(given));
  std::vector<int32_t> ids = {bos_};
  const std::vector<int32_t> words = tokenizer_->encode(text, false);
  ids.insert(ids.end(), words.begin(), words.end());
  for (int32_t id : {sep_, image_start_, height_, width_}) ids.push_back(id);
  if (static_cast<int64_t>(ids.size()) > max_tokens_)
    throw Error("the prompt takes " + std::to_string(ids.size()) + " tokens with its template, the model " +
                file_->path() + " at most " + std::to_string(max_tokens_) +
                " (its cls_token_num; tools/convert_lumina.py --prompt-tokens sets it)");
  return ids;
}

std::shared_ptr<const Condition> LuminaPrompts::condition(const std::string& prompt) const {
  const std::vector<int32_t> all = ids(prompt);
  return condition_of_text(prompt, std::vector<int32_t>(all.begin() + 1, all.end() - 4));
}

std::shared_ptr<const Condition> LuminaPrompts::condition_of_text(const std::string& prompt,
                                                                  const std::vector<int32_t>& text_ids) const {
  std::vector<int32_t> ids = {bos_};
  ids.insert(ids.end(), text_ids.begin(), text_ids.end());
  for (int32_t id : {sep_, image_start_, height_, width_}) ids.push_back(id);
  const int64_t n = static_cast<int64_t>(ids.size());
  if (n > max_tokens_)
    throw Error("the prompt takes " + std::to_string(n) + " tokens, the model " + file_->path() + " at most " +
                std::to_string(max_tokens_));
  const std::vector<float> rows = text_table_rows(*file_, kTextTable, ids, file_->path());
  std::vector<uint8_t> layout_only(ids.size(), 0);
  std::fill(layout_only.end() - kLayoutTokens, layout_only.end(), uint8_t{1});
  auto null_form = std::make_shared<CaptionEmbeddings>("the unconditional image start", n, dim_, rows, layout_only);
  null_form->set_own_mask(true);
  null_form->set_prompt(prompt, ids, nullptr);
  auto c = std::make_shared<CaptionEmbeddings>("prompt", n, dim_, rows, std::vector<uint8_t>(ids.size(), 1));
  c->set_prompt(prompt, ids, std::move(null_form));
  return c;
}

std::shared_ptr<const Condition> LuminaPrompts::restated(const Condition& c) const {
  const auto* given = dynamic_cast<const CaptionEmbeddings*>(&c);
  if (!given || given->prompt_ids().size() < 5) return nullptr;
  if (tokenizer_) return condition(given->prompt());
  const std::vector<int32_t>& all = given->prompt_ids();  // BOS, text, separator, start, sizes
  return condition_of_text(given->prompt(), std::vector<int32_t>(all.begin() + 1, all.end() - 4));
}

}  // namespace vkspec
