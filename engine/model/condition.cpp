#include "engine/model/condition.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "engine/model/npy.h"
#include "engine/model/safetensors.h"

namespace vkspec {

std::string ClassLabel::describe() const { return "class " + std::to_string(id_); }

void ClassLabel::check(const GptConfig& cfg) const {
  if (cfg.model_type != ModelType::c2i)
    throw Error("cannot condition on " + describe() + ": the model (" + cfg.family +
                ") is text-conditional (it takes " +
                (cfg.input == ConditionInput::Prompt ? "a prompt)" : "caption embeddings)"));
  if (id_ < 0 || id_ >= cfg.num_classes)
    throw Error(describe() + " is outside the model's classes [0, " + std::to_string(cfg.num_classes) + ")");
}

CaptionEmbeddings::CaptionEmbeddings(std::string source, int64_t tokens, int64_t dim, std::vector<float> values,
                                     std::vector<uint8_t> valid)
    : source_(std::move(source)), tokens_(tokens), dim_(dim), values_(std::move(values)), valid_(std::move(valid)) {
  if (tokens_ < 1 || dim_ < 1) throw Error(source_ + ": caption embeddings need at least one token and one value");
  if (static_cast<int64_t>(values_.size()) != tokens_ * dim_ || static_cast<int64_t>(valid_.size()) != tokens_)
    throw Error(source_ + ": caption embeddings of " + std::to_string(tokens_) + " x " + std::to_string(dim_) +
                " given " + std::to_string(values_.size()) + " values and " + std::to_string(valid_.size()) +
                " mask entries");
  for (float v : values_)
    if (!std::isfinite(v)) throw Error(source_ + ": caption embeddings hold a non-finite value");
  if (valid_tokens() == 0) throw Error(source_ + ": caption embeddings have no valid token (all padding)");
}

CaptionEmbeddings CaptionEmbeddings::load(const std::string& path) {
  std::vector<int64_t> shape;
  std::vector<float> values;
  const bool st = path.size() >= 12 && path.compare(path.size() - 12, 12, ".safetensors") == 0;
  if (st) {
    const SafetensorsFile f(path);
    if (f.tensor_names().size() != 1)
      throw Error(path + ": caption embeddings file must hold exactly one tensor, it holds " +
                  std::to_string(f.tensor_names().size()));
    const std::string& name = f.tensor_names().front();
    shape = f.info(name).shape;
    values = f.read_f32(name);
  } else {
    NpyArray a = read_npy_floats(path);
    shape = std::move(a.shape);
    values = std::move(a.values);
  }
  auto shape_str = [&] {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  };
  if (shape.size() == 3 && shape[0] == 1) shape.erase(shape.begin());
  if (shape.size() != 2 || shape[0] < 1 || shape[1] < 1)
    throw Error(path + ": caption embeddings have shape " + shape_str() +
                ", expected [tokens, dim] or [1, tokens, dim]");
  const int64_t tokens = shape[0], dim = shape[1];
  std::vector<uint8_t> valid(static_cast<size_t>(tokens), 0);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t d = 0; d < dim && !valid[static_cast<size_t>(t)]; ++d)
      valid[static_cast<size_t>(t)] = values[static_cast<size_t>(t * dim + d)] != 0.0f;
  return CaptionEmbeddings(path, tokens, dim, std::move(values), std::move(valid));
}

int64_t CaptionEmbeddings::valid_tokens() const {
  int64_t n = 0;
  for (uint8_t v : valid_) n += v;
  return n;
}

std::vector<float> CaptionEmbeddings::placed_values(int64_t positions) const {
  if (tokens_ > positions)
    throw Error(source_ + ": " + std::to_string(tokens_) + " caption tokens do not fit " + std::to_string(positions) +
                " condition positions");
  std::vector<float> out(static_cast<size_t>(positions * dim_), 0.0f);
  const int64_t first = positions - tokens_;
  for (int64_t t = 0; t < tokens_; ++t)
    if (valid_[static_cast<size_t>(t)])
      for (int64_t d = 0; d < dim_; ++d)
        out[static_cast<size_t>((first + t) * dim_ + d)] = values_[static_cast<size_t>(t * dim_ + d)];
  return out;
}

std::vector<uint8_t> CaptionEmbeddings::placed_mask(int64_t positions) const {
  if (tokens_ > positions)
    throw Error(source_ + ": " + std::to_string(tokens_) + " caption tokens do not fit " + std::to_string(positions) +
                " condition positions");
  std::vector<uint8_t> out(static_cast<size_t>(positions), 0);
  for (int64_t t = 0; t < tokens_; ++t)
    out[static_cast<size_t>(positions - tokens_ + t)] = valid_[static_cast<size_t>(t)];
  return out;
}

void CaptionEmbeddings::set_prompt(std::string prompt, std::vector<int32_t> ids,
                                   std::shared_ptr<const CaptionEmbeddings> null_form) {
  // (One that hides its own padding keeps the positions only: its row gets a mask of its own.)
  if (null_form && (null_form->tokens_ != tokens_ || null_form->dim_ != dim_ ||
                    (!null_form->own_mask_ && null_form->valid_ != valid_)))
    throw Error(source_ + ": the unconditional form must have the condition's tokens and padding");
  if (static_cast<int64_t>(ids.size()) != tokens_)
    throw Error(source_ + ": " + std::to_string(ids.size()) + " prompt ids for " + std::to_string(tokens_) + " tokens");
  null_form_ = std::move(null_form);
  prompt_ = std::move(prompt);
  prompt_ids_ = std::move(ids);
}

std::string CaptionEmbeddings::describe() const {
  if (!prompt_.empty()) {  // a short form: traces and messages carry the whole text elsewhere (prompt())
    size_t cut = std::min<size_t>(prompt_.size(), 117);
    while (cut < prompt_.size() && cut > 0 && (static_cast<unsigned char>(prompt_[cut]) & 0xC0) == 0x80) --cut;
    const std::string shown = prompt_.size() > 120 ? prompt_.substr(0, cut) + "..." : prompt_;
    return "prompt \"" + shown + "\" (" + std::to_string(valid_tokens()) + " tokens)";
  }
  return "caption embeddings " + source_ + " (" + std::to_string(valid_tokens()) + " of " + std::to_string(tokens_) +
         " tokens)";
}

void CaptionEmbeddings::check(const GptConfig& cfg) const {
  if (cfg.model_type != ModelType::t2i)
    throw Error("cannot condition on " + describe() + ": the model is class-conditional (it takes class labels)");
  if (cfg.input == ConditionInput::Prompt && prompt_.empty())
    throw Error("cannot condition on " + describe() + ": the model (" + cfg.family +
                ") takes a prompt through its own tokenizer, not caption embeddings");
  if (dim_ != cfg.caption_dim)
    throw Error("cannot condition on " + describe() + ": " + std::to_string(dim_) +
                " values per token, the model's caption_dim is " + std::to_string(cfg.caption_dim));
  if (tokens_ > cfg.cls_token_num)
    throw Error("cannot condition on " + describe() + ": " + std::to_string(tokens_) +
                " tokens exceed the model's cls_token_num " + std::to_string(cfg.cls_token_num));
}

std::vector<const Condition*> guided_rows(const Condition& cond, int64_t rows) {
  if (rows < 1 || rows > 2) throw Error("a conditioned forward has 1 or 2 batch rows, not " + std::to_string(rows));
  std::vector<const Condition*> out = {&cond};
  if (rows == 2) out.push_back(cond.null_form());
  return out;
}

}  // namespace vkspec
