#include "viewer/run_condition.h"

namespace vkspec::viewer {

RunCondition RunCondition::of_class(int64_t class_id) {
  RunCondition c;
  c.class_id = class_id;
  c.description = "class " + std::to_string(class_id);
  return c;
}

RunCondition RunCondition::of(const Condition& condition) {
  RunCondition c;
  if (const auto* label = dynamic_cast<const ClassLabel*>(&condition)) c.class_id = label->id();
  c.prompt = condition.prompt();
  c.description = condition.describe();
  return c;
}

RunCondition RunCondition::of(const Generation& image) {
  RunCondition c;
  c.class_id = image.class_id;
  c.prompt = image.prompt;
  c.description = image.class_id >= 0 ? "class " + std::to_string(image.class_id) : image.condition;
  return c;
}

std::string RunCondition::text(size_t max_chars) const {
  if (!prompt.empty()) {
    // A prompt's newlines would break a one-line title.
    std::string one_line = prompt;
    for (char& ch : one_line)
      if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
    return "\"" + shortened(one_line, max_chars) + "\"";
  }
  if (class_id >= 0) return "class " + std::to_string(class_id);
  return shortened(description, max_chars);
}

std::string shortened(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes >= 3 ? max_bytes - 3 : 0;
  // Back to the first byte of a character: a cut inside one would not be valid UTF-8.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "...";
}

}  // namespace vkspec::viewer
