#pragma once
// A tokenizer.json "decoder": ByteLevel (tokens back to bytes, then UTF-8 repaired as Rust's
// from_utf8_lossy does) and Sequence of them. No decoder joins the tokens with spaces, as
// Hugging Face does. Anything else is refused at load.
#include <string>
#include <vector>

#include "engine/text/json_node.h"

namespace vkspec::text {

class Decoder {
 public:
  static Decoder parse(const JsonNode& node);
  std::string decode(std::vector<std::string> tokens) const;

 private:
  enum class Kind { ByteLevel };
  void add(const JsonNode& node);

  bool present_ = false;
  std::vector<Kind> steps_;
};

}  // namespace vkspec::text
