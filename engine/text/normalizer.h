#pragma once
// A tokenizer.json "normalizer": NFC, NFD, NFKC, NFKD, Prepend, Replace, Strip, ByteLevel and
// Sequence of them (a nested Sequence is flattened: it applies the same steps in order).
// Anything else is refused at load.
#include <memory>
#include <string>
#include <vector>

#include "engine/text/json_node.h"
#include "engine/text/onig_regex.h"
#include "engine/text/unicode.h"

namespace vkspec::text {

class Normalizer {
 public:
  // A null node is no normalizer.
  static Normalizer parse(const JsonNode& node);
  // `text` is valid UTF-8 and stays so.
  void apply(std::string& text) const;
  bool empty() const { return steps_.empty(); }

 private:
  enum class Kind { Unicode, Prepend, Replace, Strip, ByteLevel };
  struct Step {
    Kind kind;
    NormalForm form = NormalForm::Nfc;
    std::string text;  // Prepend's prefix, Replace's content
    std::shared_ptr<const OnigRegex> pattern;
    bool left = false, right = false;  // Strip
    std::string where;
  };
  void add(const JsonNode& node);
  static void strip(std::string& text, bool left, bool right);

  std::vector<Step> steps_;
};

// A Split or Replace "pattern": {"Regex": ...} or {"String": ...}.
std::shared_ptr<const OnigRegex> parse_pattern(const JsonNode& node);

}  // namespace vkspec::text
