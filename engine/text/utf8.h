#pragma once
// UTF-8 as Rust's str and String::from_utf8_lossy see it: Hugging Face's tokenizers (Rust) only
// ever hold valid UTF-8, and repair decoded bytes the way from_utf8_lossy does.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vkspec::text {

// The length of the well-formed UTF-8 sequence at s[i] (1 to 4), or 0 when the bytes there are
// not one (Unicode's table 3-7: no overlong forms, surrogates or code points above U+10FFFF).
size_t utf8_sequence_length(std::string_view s, size_t i);

// The byte offset of the first invalid sequence, or s.size() when s is valid UTF-8.
size_t first_invalid_utf8(std::string_view s);

// The code point at s[i] and its length; s must be valid UTF-8 there.
char32_t decode_utf8(std::string_view s, size_t i, size_t* length);

void append_utf8(std::string& out, char32_t c);

// Each maximal ill-formed subsequence becomes U+FFFD, as Rust's String::from_utf8_lossy does
// (the ByteLevel decoder's last step).
std::string utf8_lossy(std::string_view bytes);

// For error messages: printable ASCII as is, everything else escaped (\n, \xNN, \u{...}).
std::string escape_for_message(std::string_view s, size_t max_chars = 80);

}  // namespace vkspec::text
