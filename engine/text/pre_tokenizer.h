#pragma once
// A tokenizer.json "pre_tokenizer": Split (Regex or String pattern, any behavior, invert),
// ByteLevel (add_prefix_space, use_regex with GPT-2's regex), Digits (individual_digits) and
// Sequence of them (flattened). Anything else is refused at load.
#include <memory>
#include <string>
#include <vector>

#include "engine/text/json_node.h"
#include "engine/text/onig_regex.h"
#include "engine/text/split.h"

namespace vkspec::text {

class PreTokenizer {
 public:
  // A null node is no pre-tokenizer: each piece is one word.
  static PreTokenizer parse(const JsonNode& node);
  // Cuts each piece (valid UTF-8) into the words the model tokenizes; byte-level steps leave
  // them in the byte-level alphabet.
  void apply(std::vector<std::string>& pieces) const;

 private:
  enum class Kind { Split, ByteLevel, Digits };
  struct Step {
    Kind kind;
    std::shared_ptr<const OnigRegex> pattern;  // Split's; ByteLevel's GPT-2 regex when use_regex
    SplitBehavior behavior = SplitBehavior::Isolated;
    bool invert = false;
    bool add_prefix_space = false;  // ByteLevel
    bool individual_digits = false;
  };
  void add(const JsonNode& node);
  static void apply_step(const Step& step, const std::string& piece, std::vector<std::string>& out);

  std::vector<Step> steps_;
};

}  // namespace vkspec::text
