#pragma once
// GPT-2's byte-level alphabet: every byte is shown as a printable character (bytes_to_unicode in
// GPT-2's encoder.py; Hugging Face's ByteLevel pre-tokenizer, normalizer and decoder).
#include <string>
#include <string_view>

namespace vkspec::text {

// The regex the ByteLevel pre-tokenizer splits with when use_regex is true (GPT-2's).
extern const char* const kGpt2SplitRegex;

// Each byte of s replaced by its byte-level character (UTF-8).
std::string to_byte_level(std::string_view s);

// Appends the bytes a byte-level token stands for and returns true, or returns false (appending
// nothing) when some character of the token is not in the alphabet (e.g. an added token).
bool append_byte_level_bytes(std::string_view token, std::string& out);

}  // namespace vkspec::text
