#include "engine/text/normalizer.h"

#include "engine/text/byte_level.h"
#include "engine/text/utf8.h"

namespace vkspec::text {

std::shared_ptr<const OnigRegex> parse_pattern(const JsonNode& node) {
  const std::string where = node.file() + ": " + node.path();
  if (node.has("Regex")) return OnigRegex::compile(node.at("Regex").str(), where);
  if (node.has("String")) return OnigRegex::literal(node.at("String").str(), where);
  node.fail("is neither {\"Regex\": ...} nor {\"String\": ...}");
}

Normalizer Normalizer::parse(const JsonNode& node) {
  Normalizer n;
  if (!node.is_null()) n.add(node);
  return n;
}

void Normalizer::add(const JsonNode& node) {
  const std::string type = node.type();
  Step step{Kind::Unicode};
  step.where = node.file() + ": " + node.path();
  if (type == "Sequence") {
    const JsonNode list = node.at("normalizers");
    for (size_t i = 0; i < list.array_size(); ++i) add(list.at(i));
    return;
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    step.form = type == "NFC"    ? NormalForm::Nfc
                : type == "NFD"  ? NormalForm::Nfd
                : type == "NFKC" ? NormalForm::Nfkc
                                 : NormalForm::Nfkd;
  } else if (type == "Prepend") {
    step.kind = Kind::Prepend;
    step.text = node.at("prepend").str();
  } else if (type == "Replace") {
    step.kind = Kind::Replace;
    step.pattern = parse_pattern(node.at("pattern"));
    step.text = node.at("content").str();
  } else if (type == "Strip") {
    step.kind = Kind::Strip;
    step.left = node.bool_or("strip_left", false);
    step.right = node.bool_or("strip_right", false);
  } else if (type == "ByteLevel") {
    step.kind = Kind::ByteLevel;
  } else {
    node.at("type").fail("normalizer \"" + type +
                         "\" is not supported (supported: Sequence, NFC, NFD, NFKC, NFKD, Prepend, Replace, Strip, "
                         "ByteLevel)");
  }
  steps_.push_back(std::move(step));
}

void Normalizer::strip(std::string& text, bool left, bool right) {
  size_t begin = 0, end = text.size();
  size_t n = 0;
  while (left && begin < end && is_white_space(decode_utf8(text, begin, &n))) begin += n;
  while (right && end > begin) {
    size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    if (!is_white_space(decode_utf8(text, start, &n))) break;
    end = start;
  }
  text = text.substr(begin, end - begin);
}

void Normalizer::apply(std::string& text) const {
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::Unicode: text = normalize_unicode(text, step.form, step.where); break;
      case Kind::Prepend:
        if (!text.empty()) text = step.text + text;
        break;
      case Kind::Replace: {
        std::string out;
        size_t last = 0;
        for (const auto& [start, end] : step.pattern->find_all(text)) {
          out.append(text, last, start - last);
          out += step.text;
          last = end;
        }
        text = out + text.substr(last);
        break;
      }
      case Kind::Strip: strip(text, step.left, step.right); break;
      case Kind::ByteLevel: text = to_byte_level(text); break;
    }
  }
}

}  // namespace vkspec::text
