#pragma once
// The Unicode character data the tokenizer needs beyond its regexes, from ICU.
#include <cstdint>
#include <string>
#include <string_view>

namespace vkspec::text {

// Rust's char::is_whitespace and the regex crate's \s: the White_Space property.
bool is_white_space(char32_t c);
// The regex crate's Unicode \w (added tokens' single_word): Alphabetic, marks, decimal
// numbers, connector punctuation and Join_Control.
bool is_word_char(char32_t c);

// A general category (or a union of them, e.g. L) or a script, as a regex names it.
struct UnicodeProperty {
  std::string pcre2;  // how PCRE2 names it: \p{Lu}, \p{sc:Han} (Script, not Script_Extensions)
  bool script = false;
  uint32_t category_mask = 0;  // ICU's U_GC_*_MASK bits
  int32_t script_code = 0;
};
// Loose matching of the name (case, spaces, '_' and '-' ignored), as Oniguruma's; false when it
// is neither a general category nor a script.
bool lookup_unicode_property(const std::string& name, UnicodeProperty* property);
bool has_unicode_property(char32_t c, const UnicodeProperty& property);
// Whether the property's set changes as code points get assigned (it holds unassigned ones).
bool covers_unassigned(const UnicodeProperty& property);

enum class NormalForm { Nfc, Nfd, Nfkc, Nfkd };
// `text` must be valid UTF-8; `where` names the tokenizer.json and normalizer for an error.
std::string normalize_unicode(std::string_view text, NormalForm form, const std::string& where);

}  // namespace vkspec::text
