#include "engine/text/utf8.h"

#include <cstdio>

namespace vkspec::text {
namespace {

// The range the second byte of a sequence may take, by lead byte (Unicode table 3-7); the
// later continuation bytes are always 0x80..0xBF.
bool second_byte_ok(unsigned char lead, unsigned char b) {
  if (lead == 0xE0) return b >= 0xA0 && b <= 0xBF;
  if (lead == 0xED) return b >= 0x80 && b <= 0x9F;
  if (lead == 0xF0) return b >= 0x90 && b <= 0xBF;
  if (lead == 0xF4) return b >= 0x80 && b <= 0x8F;
  return b >= 0x80 && b <= 0xBF;
}

size_t expected_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// How many bytes from s[i] form the longest prefix of a well-formed sequence (at least 1): the
// "maximal subpart" that from_utf8_lossy replaces by one U+FFFD when it is not complete.
size_t valid_prefix_length(std::string_view s, size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  const size_t need = expected_length(lead);
  if (need <= 1) return 1;
  size_t k = 1;
  while (k < need && i + k < s.size()) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    const bool ok = k == 1 ? second_byte_ok(lead, b) : (b >= 0x80 && b <= 0xBF);
    if (!ok) break;
    ++k;
  }
  return k;
}

}  // namespace

size_t utf8_sequence_length(std::string_view s, size_t i) {
  const size_t need = expected_length(static_cast<unsigned char>(s[i]));
  if (need == 0) return 0;
  return valid_prefix_length(s, i) == need ? need : 0;
}

size_t first_invalid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = utf8_sequence_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return s.size();
}

char32_t decode_utf8(std::string_view s, size_t i, size_t* length) {
  const auto lead = static_cast<unsigned char>(s[i]);
  const size_t n = expected_length(lead);
  *length = n;
  if (n == 1) return lead;
  char32_t c = lead & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return c;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    const size_t n = utf8_sequence_length(bytes, i);
    if (n > 0) {
      out.append(bytes.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      i += valid_prefix_length(bytes, i);
    }
  }
  return out;
}

std::string escape_for_message(std::string_view s, size_t max_chars) {
  std::string out;
  size_t i = 0, chars = 0;
  char buf[16];
  while (i < s.size() && chars < max_chars) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_sequence_length(s, i);
    if (b == '\n') {
      out += "\\n", i += 1;
    } else if (b == '\r') {
      out += "\\r", i += 1;
    } else if (b == '\t') {
      out += "\\t", i += 1;
    } else if (b == '\\' || b == '"') {
      out += '\\', out += static_cast<char>(b), i += 1;
    } else if (b >= 0x20 && b < 0x7F) {
      out += static_cast<char>(b), i += 1;
    } else if (n == 0) {
      std::snprintf(buf, sizeof(buf), "\\x%02X", b);
      out += buf, i += 1;
    } else {
      size_t len = 0;
      std::snprintf(buf, sizeof(buf), "\\u{%X}", static_cast<unsigned>(decode_utf8(s, i, &len)));
      out += buf, i += len;
    }
    ++chars;
  }
  if (i < s.size()) out += "...";
  return out;
}

}  // namespace vkspec::text
