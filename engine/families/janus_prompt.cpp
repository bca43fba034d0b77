#include "engine/families/janus_prompt.h"

#include "common/error.h"
#include "engine/model/text_table.h"

namespace vkspec {

JanusPrompts::JanusPrompts(JanusPromptSpec spec, std::shared_ptr<const text::BpeTokenizer> tokenizer,
                           std::shared_ptr<const SafetensorsFile> file, std::string table)
    : spec_(std::move(spec)), tokenizer_(std::move(tokenizer)), file_(std::move(file)), table_(std::move(table)) {
  if (spec_.template_.find("{prompt}") == std::string::npos)
    throw Error(spec_.model + ": metadata prompt_template has no {prompt}");
  if (!tokenizer_) return;
  if (tokenizer_->vocab_size() > spec_.text_vocab)
    throw Error(tokenizer_->name() + ": " + std::to_string(tokenizer_->vocab_size()) +
                " tokens, more than the model's text vocabulary " + std::to_string(spec_.text_vocab) + " (" +
                spec_.model + "): the tokenizer is not this model's");
  for (const auto& [what, id] : {std::pair<const char*, int32_t>{"bos_id", spec_.bos_id},
                                 {"pad_id", spec_.pad_id},
                                 {"image_start_id", spec_.image_start_id}}) {
    bool known = false;
    try {
      known = tokenizer_->token_to_id(tokenizer_->id_to_token(id)) == id;
    } catch (const Error&) {  // a hole in the tokenizer's ids: said below
    }
    if (!known)
      throw Error(spec_.model + ": metadata " + what + " = " + std::to_string(id) + " is no token of " +
                  tokenizer_->name() + ": the tokenizer is not this model's");
  }
}

std::vector<int32_t> JanusPrompts::ids(const std::string& given) const {
  if (!tokenizer_) throw Error(spec_.model + ": names no tokenizer (metadata tokenizer), so it cannot take a prompt");
  const std::string prompt = stripped_prompt(given);  // the released processor strips it
  std::string text = spec_.template_;
  text.replace(text.find("{prompt}"), 8, prompt);
  std::vector<int32_t> ids = tokenizer_->encode(text, true);
  if (ids.empty() || ids.front() != spec_.bos_id) ids.insert(ids.begin(), spec_.bos_id);  // Janus's ids start so
  if (ids.back() != spec_.image_start_id)
    throw Error(tokenizer_->name() + ": the template does not end in the model's <begin_of_image> (id " +
                std::to_string(spec_.image_start_id) + "): the tokenizer does not match " + spec_.model);
  if (static_cast<int64_t>(ids.size()) > spec_.max_tokens)
    throw Error("the prompt takes " + std::to_string(ids.size()) + " tokens with its template, the model " +
                spec_.model + " at most " + std::to_string(spec_.max_tokens) +
                " (its cls_token_num; tools/convert_janus.py --prompt-tokens sets it)");
  return ids;
}

std::vector<int32_t> JanusPrompts::unconditional_ids(const std::vector<int32_t>& ids) const {
  std::vector<int32_t> out = ids;
  for (size_t i = 1; i + 1 < out.size(); ++i) out[i] = spec_.pad_id;
  return out;
}

std::vector<float> JanusPrompts::rows(const std::vector<int32_t>& ids) const {
  return text_table_rows(*file_, table_, ids, spec_.model);
}

std::shared_ptr<const Condition> JanusPrompts::condition(const std::string& prompt) const {
  return condition_of_ids(prompt, ids(prompt));
}

std::shared_ptr<const Condition> JanusPrompts::restated(const Condition& c) const {
  const auto* given = dynamic_cast<const CaptionEmbeddings*>(&c);
  if (!given || given->prompt_ids().empty()) return nullptr;
  if (tokenizer_) return condition(given->prompt());
  if (static_cast<int64_t>(given->prompt_ids().size()) > spec_.max_tokens)
    throw Error("the prompt takes " + std::to_string(given->prompt_ids().size()) + " tokens, the model " + spec_.model +
                " at most " + std::to_string(spec_.max_tokens));
  return condition_of_ids(given->prompt(), given->prompt_ids());
}

std::shared_ptr<const Condition> JanusPrompts::condition_of_ids(const std::string& prompt,
                                                                const std::vector<int32_t>& cond) const {
  const std::vector<int32_t> uncond = unconditional_ids(cond);
  const int64_t n = static_cast<int64_t>(cond.size());
  const std::vector<uint8_t> valid(cond.size(), 1);
  auto null_form = std::make_shared<CaptionEmbeddings>("the unconditional prompt", n, spec_.dim, rows(uncond), valid);
  null_form->set_prompt(prompt, uncond, nullptr);  // the prompt's own row, for the model's checks
  auto c = std::make_shared<CaptionEmbeddings>("prompt", n, spec_.dim, rows(cond), valid);
  c->set_prompt(prompt, cond, std::move(null_form));
  return c;
}

}  // namespace vkspec
