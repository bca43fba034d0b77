#pragma once
// The Split and Replace regexes of a tokenizer.json, run the way Hugging Face's tokenizers run
// them: their patterns are written for Oniguruma (Ruby syntax), which we run on PCRE2 (UTF, UCP)
// after translating what the two engines read differently (translate_oniguruma), and matches
// are enumerated as the Rust onig crate's find_iter does (empty matches included).
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct pcre2_real_code_8;
struct pcre2_real_match_data_8;

namespace vkspec::text {

// Oniguruma pattern -> PCRE2 pattern with the same matches on valid UTF-8:
// \s, \S: Unicode White_Space (PCRE2's UCP \s also takes U+180E); \h, \H: hex digits (PCRE2:
// horizontal space); \v: the VT character (PCRE2: vertical space); \uHHHH: \x{HHHH}; (?m):
// dot-all; {,n}: {0,n}; \p{..} and \d: a general category or a script (Script, where PCRE2's
// bare name means Script_Extensions), plus the code points PCRE2's older Unicode tables leave
// unassigned and ICU's assign to it. `^` and `$` are line anchors in Oniguruma: the pattern is
// compiled multi-line. What either engine reads differently and is not listed (\w, \b, other
// properties, nested classes, &&, backreferences, inline options but i and m, multi-character
// case folds under (?i)...) is refused: throws vkspec::Error starting with `where`.
std::string translate_oniguruma(const std::string& pattern, const std::string& where);

class OnigRegex {
 public:
  // Throws vkspec::Error starting with `where` (file and JSON path) when the pattern cannot be
  // translated or compiled.
  static std::shared_ptr<const OnigRegex> compile(const std::string& pattern, const std::string& where);
  // A Split or Replace pattern given as {"String": ...}: the text itself, no metacharacters.
  static std::shared_ptr<const OnigRegex> literal(const std::string& text, const std::string& where);
  ~OnigRegex();
  OnigRegex(const OnigRegex&) = delete;
  OnigRegex& operator=(const OnigRegex&) = delete;

  // The (start, end) byte offsets of every match in valid UTF-8 text, in order, as onig's
  // find_iter gives them: an empty match right where the previous match ended is skipped.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  OnigRegex() = default;
  bool search(std::string_view text, size_t from, pcre2_real_match_data_8* data, size_t* start, size_t* end) const;

  pcre2_real_code_8* code_ = nullptr;
  std::string where_;
};

}  // namespace vkspec::text
