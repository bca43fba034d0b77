#pragma once
// Janus-Pro's prompt (deepseek-ai/Janus, generation_inference.py): the user's text inside the SFT
// template ending in <begin_of_image>, tokenized with BOS; the unconditional row for CFG is the same
// ids with every token but the first and last replaced by the pad token. Both become rows of the
// language model's own embedding table, gathered on the host from the model file (the table,
// 102400 x 4096 for 7B, never goes to the device: a prompt needs a few dozen rows once).
#include <memory>
#include <string>
#include <vector>

#include "engine/model/condition.h"
#include "engine/model/safetensors.h"
#include "engine/text/bpe_tokenizer.h"

namespace vkspec {

struct JanusPromptSpec {
  std::string model;      // the model file, in messages
  std::string template_;  // with "{prompt}" where the user's text goes
  int32_t bos_id = 0, pad_id = 0, image_start_id = 0;
  int64_t max_tokens = 0;  // the model's condition positions
  int64_t text_vocab = 0, dim = 0;
};

class JanusPrompts {
 public:
  // table: the text embedding tensor's name in `file` ([text_vocab, dim], any float dtype).
  JanusPrompts(JanusPromptSpec spec, std::shared_ptr<const text::BpeTokenizer> tokenizer,
               std::shared_ptr<const SafetensorsFile> file, std::string table);

  // The template's ids for `prompt` (BOS first, <begin_of_image> last); throws Error for an empty
  // or too long prompt, or a tokenizer that does not end the template with the model's ids.
  std::vector<int32_t> ids(const std::string& prompt) const;
  // Janus's unconditional ids: all but the first and last replaced by pad.
  std::vector<int32_t> unconditional_ids(const std::vector<int32_t>& ids) const;
  // The condition (embedding rows of ids) with its unconditional form.
  std::shared_ptr<const Condition> condition(const std::string& prompt) const;
  // Another model's prompt condition as this model takes it: its text through this model's
  // tokenizer, or where it has none the same ids, as rows of this model's table; nullptr for a
  // condition that is not a prompt.
  std::shared_ptr<const Condition> restated(const Condition& c) const;

 private:
  std::vector<float> rows(const std::vector<int32_t>& ids) const;
  std::shared_ptr<const Condition> condition_of_ids(const std::string& prompt, const std::vector<int32_t>& cond) const;

  JanusPromptSpec spec_;
  std::shared_ptr<const text::BpeTokenizer> tokenizer_;
  std::shared_ptr<const SafetensorsFile> file_;
  std::string table_;
};

}  // namespace vkspec
