#include "engine/text/decoder.h"

#include "engine/text/byte_level.h"
#include "engine/text/utf8.h"

namespace vkspec::text {

Decoder Decoder::parse(const JsonNode& node) {
  Decoder d;
  d.present_ = !node.is_null();
  if (d.present_) d.add(node);
  return d;
}

void Decoder::add(const JsonNode& node) {
  const std::string type = node.type();
  if (type == "Sequence") {
    const JsonNode list = node.at("decoders");
    for (size_t i = 0; i < list.array_size(); ++i) add(list.at(i));
  } else if (type == "ByteLevel") {
    steps_.push_back(Kind::ByteLevel);
  } else {
    node.at("type").fail("decoder \"" + type + "\" is not supported (supported: ByteLevel, Sequence)");
  }
}

std::string Decoder::decode(std::vector<std::string> tokens) const {
  if (!present_) {
    std::string joined;
    for (size_t i = 0; i < tokens.size(); ++i) joined += (i ? " " : "") + tokens[i];
    return joined;
  }
  for (Kind step : steps_) {
    if (step == Kind::ByteLevel) {
      // A token outside the byte-level alphabet (an added token) stands for its own UTF-8.
      std::string bytes;
      for (const std::string& t : tokens) {
        if (!append_byte_level_bytes(t, bytes)) bytes += t;
      }
      tokens = {utf8_lossy(bytes)};
    }
  }
  std::string out;
  for (const std::string& t : tokens) out += t;
  return out;
}

}  // namespace vkspec::text
