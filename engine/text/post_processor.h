#pragma once
// A tokenizer.json "post_processor" applied to one sequence: TemplateProcessing (its "single"
// template), BertProcessing and RobertaProcessing ([cls] $A [sep]), ByteLevel (offsets only:
// no change to ids) and Sequence of them. Special tokens are added only with
// add_special_tokens, as in Hugging Face's encode.
#include <cstdint>
#include <vector>

#include "engine/text/json_node.h"

namespace vkspec::text {

class PostProcessor {
 public:
  // A null node is no post-processor.
  static PostProcessor parse(const JsonNode& node);
  void apply(std::vector<int32_t>& ids, bool add_special_tokens) const;

 private:
  // A template piece: the sequence (empty ids) or a special token's ids.
  struct Piece {
    bool sequence = false;
    std::vector<int32_t> ids;
  };
  void add(const JsonNode& node);
  void add_template(const JsonNode& node);
  void add_cls_sep(const JsonNode& node);

  std::vector<std::vector<Piece>> templates_;  // applied in order (a Sequence)
};

}  // namespace vkspec::text
