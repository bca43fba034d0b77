#include "engine/text/byte_level.h"

#include <array>
#include <unordered_map>

#include "engine/text/utf8.h"

namespace vkspec::text {

const char* const kGpt2SplitRegex =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

namespace {

struct Alphabet {
  std::array<std::string, 256> byte_to_char;
  std::unordered_map<char32_t, unsigned char> char_to_byte;

  Alphabet() {
    // Printable Latin-1 bytes stand for themselves; the others (controls, space, 0x7F..0xA0,
    // 0xAD) take U+0100 onwards in byte order.
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t c = printable ? static_cast<char32_t>(b) : next++;
      append_utf8(byte_to_char[b], c);
      char_to_byte[c] = static_cast<unsigned char>(b);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

}  // namespace

std::string to_byte_level(std::string_view s) {
  const Alphabet& a = alphabet();
  std::string out;
  out.reserve(s.size() * 2);
  for (char c : s) out += a.byte_to_char[static_cast<unsigned char>(c)];
  return out;
}

bool append_byte_level_bytes(std::string_view token, std::string& out) {
  const Alphabet& a = alphabet();
  const size_t mark = out.size();
  size_t i = 0;
  while (i < token.size()) {
    size_t n = utf8_sequence_length(token, i);
    const auto it = n == 0 ? a.char_to_byte.end() : a.char_to_byte.find(decode_utf8(token, i, &n));
    if (it == a.char_to_byte.end()) {
      out.resize(mark);
      return false;
    }
    out += static_cast<char>(it->second);
    i += n;
  }
  return true;
}

}  // namespace vkspec::text
