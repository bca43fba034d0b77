#include "engine/text/onig_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdio>
#include <map>
#include <mutex>

#include "common/error.h"
#include "engine/text/unicode.h"
#include "engine/text/utf8.h"

namespace vkspec::text {
namespace {

// Oniguruma's \s: the Unicode White_Space property (checked against the reference: U+180E,
// U+200B, U+FEFF and U+001C..U+001F are not in it).
constexpr const char* kWhiteSpace =
    "\\x{09}-\\x{0D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
    "\\x{205F}\\x{3000}";
constexpr const char* kHex = "0-9a-fA-F";

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_ascii_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string pcre2_message(int code);

// The code points PCRE2's built-in Unicode tables (Debian 12's PCRE2 10.42: Unicode 14) leave
// unassigned, as ranges: where ICU (and Oniguruma, Unicode 15 in Hugging Face's build) may know
// better.
std::vector<std::pair<char32_t, char32_t>> pcre2_unassigned() {
  std::string all;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c < 0xD800 || c > 0xDFFF) append_utf8(all, c);
  }
  int code = 0;
  PCRE2_SIZE offset = 0;
  const char* pattern = "\\p{Cn}+";
  pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                                 &code, &offset, nullptr);
  if (!re) throw Error("PCRE2 cannot compile \\p{Cn}: " + pcre2_message(code));
  pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(re, nullptr);
  std::vector<std::pair<char32_t, char32_t>> ranges;
  size_t from = 0, n = 0;
  while (pcre2_match(re, reinterpret_cast<PCRE2_SPTR>(all.data()), all.size(), from, PCRE2_NO_UTF_CHECK, data,
                     nullptr) > 0) {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data);
    const char32_t first = decode_utf8(all, ov[0], &n);
    size_t last_start = ov[1] - 1;
    while ((static_cast<unsigned char>(all[last_start]) & 0xC0) == 0x80) --last_start;
    ranges.emplace_back(first, decode_utf8(all, last_start, &n));
    from = ov[1];
  }
  pcre2_match_data_free(data);
  pcre2_code_free(re);
  return ranges;
}

// PCRE2 class ranges of the code points PCRE2 takes as unassigned but ICU puts in `property`.
std::string newly_assigned(const UnicodeProperty& property) {
  static const std::vector<std::pair<char32_t, char32_t>> unassigned = pcre2_unassigned();
  static std::mutex mutex;
  static std::map<std::string, std::string> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache.find(property.pcre2);
  if (it != cache.end()) return it->second;
  std::string out;
  char buf[40];
  for (const auto& [lo, hi] : unassigned) {
    for (char32_t c = lo; c <= hi; ++c) {
      if (!has_unicode_property(c, property)) continue;
      char32_t end = c;
      while (end < hi && has_unicode_property(end + 1, property)) ++end;
      std::snprintf(buf, sizeof(buf), "\\x{%X}-\\x{%X}", static_cast<unsigned>(c), static_cast<unsigned>(end));
      out += buf;
      c = end;
    }
  }
  return cache[property.pcre2] = out;
}

class Translator {
 public:
  Translator(const std::string& pattern, const std::string& where) : p_(pattern), where_(where) {}

  std::string run() {
    while (i_ < p_.size()) {
      if (in_class_) {
        class_char();
      } else {
        plain_char();
      }
    }
    if (in_class_) refuse("an unterminated character class");
    return out_;
  }

 private:
  [[noreturn]] void refuse(const std::string& what) const {
    throw Error(where_ + ": regex \"" + escape_for_message(p_) + "\": " + what + " at byte " + std::to_string(i_) +
                " (Oniguruma and PCRE2 read it differently, so it is not supported)");
  }

  void copy_char() {
    const size_t n = std::max<size_t>(1, utf8_sequence_length(p_, i_));
    out_.append(p_, i_, n);
    i_ += n;
  }

  // Oniguruma folds case across characters ((?i)ss matches "ß", (?i)st "ﬆ"); PCRE2 does not.
  // Under (?i) a literal that could take part in such a fold is refused: any non-ASCII
  // character, or one of the ASCII pairs a ligature or ß folds to.
  void caseless_literal(char c) {
    if (!caseless_) return;
    if (static_cast<unsigned char>(c) >= 0x80) refuse("a non-ASCII character under (?i)");
    const char lower = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    static const char* const kPairs[] = {"ss", "st", "ff", "fi", "fl"};
    for (const char* pair : kPairs) {
      if (previous_literal_ == pair[0] && lower == pair[1]) refuse("a multi-character case fold under (?i)");
    }
    previous_literal_ = lower;
  }

  void plain_char() {
    const char c = p_[i_];
    if (c != '\\' && c != '[' && c != '(' && c != ')' && std::string(".^$|*+?{}").find(c) == std::string::npos) {
      caseless_literal(c);
    } else {
      previous_literal_ = 0;
    }
    if (c == '\\') return escape(false);
    if (c == '[') return open_class();
    if (c == ')') {
      caseless_ = groups_.empty() ? false : groups_.back();
      if (!groups_.empty()) groups_.pop_back();
    }
    if (c == '(') groups_.push_back(caseless_);
    if (c == '(' && p_.compare(i_, 2, "(?") == 0) return group();
    if (c == '{' && p_.compare(i_, 2, "{,") == 0) {
      out_ += "{0,";
      i_ += 2;
      return;
    }
    copy_char();
  }

  void open_class() {
    out_ += '[';
    ++i_;
    if (i_ < p_.size() && p_[i_] == '^') out_ += p_[i_++];
    // A ']' right after '[' or '[^' is a literal in both engines.
    if (i_ < p_.size() && p_[i_] == ']') out_ += p_[i_++];
    in_class_ = true;
  }

  void class_char() {
    const char c = p_[i_];
    if (caseless_ && static_cast<unsigned char>(c) >= 0x80) refuse("a non-ASCII character under (?i)");
    if (c == '\\') return escape(true);
    if (c == '[') refuse("a nested class or POSIX bracket");
    if (c == '&' && p_.compare(i_, 2, "&&") == 0) refuse("a class intersection (&&)");
    if (c == ']') in_class_ = false;
    copy_char();
  }

  // (?:...), lookarounds, atomic and named groups mean the same in both; of the inline options
  // only i (and m, Oniguruma's dot-all, which is PCRE2's s) are taken.
  void group() {
    static const char* const kSame[] = {"(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>"};
    for (const char* s : kSame) {
      if (p_.compare(i_, std::char_traits<char>::length(s), s) == 0) {
        out_ += s;
        i_ += std::char_traits<char>::length(s);
        return;
      }
    }
    if (p_.compare(i_, 3, "(?<") == 0) {  // a named group
      out_ += "(?<";
      i_ += 3;
      return;
    }
    size_t j = i_ + 2;
    std::string flags;
    bool on = true, caseless = caseless_;
    for (; j < p_.size() && (p_[j] == 'i' || p_[j] == 'm' || p_[j] == '-'); ++j) {
      if (p_[j] == '-') on = false;
      if (p_[j] == 'i') caseless = on;
      flags += p_[j] == 'm' ? 's' : p_[j];
    }
    if (flags.empty() || j >= p_.size() || (p_[j] != ':' && p_[j] != ')')) refuse("a group kind");
    if (p_[j] == ')') {  // (?i) holds to the end of the enclosing group: this was no group
      groups_.pop_back();
    }
    caseless_ = caseless;
    out_ += "(?" + flags + p_[j];
    i_ = j + 1;
  }

  void escape(bool in_class) {
    if (i_ + 1 >= p_.size()) refuse("a trailing backslash");
    const char c = p_[i_ + 1];
    if (!is_ascii_alnum(c)) {  // an escaped punctuation or non-ASCII character: itself
      out_ += '\\';
      ++i_;
      copy_char();
      return;
    }
    i_ += 2;
    if (c == 'u') return unicode_escape();
    if (c == 'x') return hex_escape();
    if (c == 'p' || c == 'P') return property(c, in_class);
    if (c == 'd' || c == 'D') return emit_property("Nd", c == 'D', in_class);  // Unicode \d: Nd
    const std::string same = in_class ? "rntfeab" : "rntfeaAzZ";
    if (same.find(c) != std::string::npos) {
      out_ += '\\';
      out_ += c;
      return;
    }
    const std::string open = in_class ? "" : "[";
    const std::string close = in_class ? "" : "]";
    if (c == 's') return void(out_ += open + kWhiteSpace + close);
    if (c == 'h') return void(out_ += open + kHex + close);
    if (c == 'v') return void(out_ += "\\x{0B}");
    if (!in_class && c == 'S') return void(out_ += std::string("[^") + kWhiteSpace + "]");
    if (!in_class && c == 'H') return void(out_ += std::string("[^") + kHex + "]");
    i_ -= 2;
    refuse(std::string("the escape \\") + c);
  }

  // \xHH or \x{H...}: copied whole, so that its digits are not taken for literals.
  void hex_escape() {
    out_ += "\\x";
    if (i_ < p_.size() && p_[i_] == '{') {
      const size_t close = p_.find('}', i_);
      if (close == std::string::npos) refuse("\\x{ without }");
      out_.append(p_, i_, close + 1 - i_);
      i_ = close + 1;
      return;
    }
    for (int k = 0; k < 2 && i_ < p_.size() && is_hex(p_[i_]); ++k) out_ += p_[i_++];
  }

  void unicode_escape() {
    if (i_ + 4 > p_.size() || !is_hex(p_[i_]) || !is_hex(p_[i_ + 1]) || !is_hex(p_[i_ + 2]) || !is_hex(p_[i_ + 3])) {
      refuse("\\u without four hex digits");
    }
    out_ += "\\x{" + p_.substr(i_, 4) + "}";
    i_ += 4;
  }

  // \p{Name} and \P{Name} (\p{^Name}) for a general category or a script, with the code points
  // PCRE2's tables leave unassigned but ICU's (Oniguruma's Unicode version or later) assign to
  // it; a script is Oniguruma's Script property (PCRE2's bare \p{Han} means Script_Extensions).
  void property(char c, bool in_class) {
    if (i_ >= p_.size() || p_[i_] != '{') refuse("\\p without {...}");
    const size_t close = p_.find('}', i_);
    if (close == std::string::npos) refuse("\\p{ without }");
    std::string name = p_.substr(i_ + 1, close - i_ - 1);
    bool negated = c == 'P';
    if (!name.empty() && name[0] == '^') negated = !negated, name.erase(0, 1);
    emit_property(name, negated, in_class);
    i_ = close + 1;
  }

  void emit_property(const std::string& name, bool negated, bool in_class) {
    UnicodeProperty prop;
    if (!lookup_unicode_property(name, &prop)) {
      refuse("the property \\p{" + name + "} (only general categories and scripts)");
    }
    if (covers_unassigned(prop)) refuse("the property \\p{" + name + "}, which holds unassigned code points");
    if (negated && in_class) refuse("a negated property or \\D inside a class");
    // Oniguruma folds case inside property classes under (?i), PCRE2 does not.
    if (caseless_ && name != "Nd") refuse("the property \\p{" + name + "} under (?i)");
    const std::string set = prop.pcre2 + newly_assigned(prop);
    if (in_class) {
      out_ += set;
    } else {
      out_ += (negated ? "[^" : "[") + set + "]";
    }
  }

  const std::string& p_;
  const std::string& where_;
  std::string out_;
  size_t i_ = 0;
  bool in_class_ = false;
  bool caseless_ = false;
  std::vector<bool> groups_;  // the caseless state outside each open group
  char previous_literal_ = 0;
};

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof(buf));
  return reinterpret_cast<const char*>(buf);
}

pcre2_code* compile_pcre2(const std::string& pattern, uint32_t options, const std::string& where,
                          const std::string& shown) {
  pcre2_compile_context* context = pcre2_compile_context_create(nullptr);
  pcre2_set_newline(context, PCRE2_NEWLINE_LF);
  int code = 0;
  PCRE2_SIZE offset = 0;
  // PCRE2_LITERAL takes no UCP: a literal has no classes for it to widen.
  if (!(options & PCRE2_LITERAL)) options |= PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C;
  pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options | PCRE2_UTF,
                                 &code, &offset, context);
  pcre2_compile_context_free(context);
  if (!re) {
    throw Error(where + ": regex \"" + escape_for_message(shown) + "\" does not compile: " + pcre2_message(code) +
                " (at byte " + std::to_string(offset) + " of its PCRE2 form)");
  }
  pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);  // best effort: without JIT pcre2_match interprets
  return re;
}

}  // namespace

std::string translate_oniguruma(const std::string& pattern, const std::string& where) {
  return Translator(pattern, where).run();
}

std::shared_ptr<const OnigRegex> OnigRegex::compile(const std::string& pattern, const std::string& where) {
  std::shared_ptr<OnigRegex> re(new OnigRegex());
  re->where_ = where;
  re->code_ = compile_pcre2(translate_oniguruma(pattern, where), PCRE2_MULTILINE, where, pattern);
  return re;
}

std::shared_ptr<const OnigRegex> OnigRegex::literal(const std::string& text, const std::string& where) {
  std::shared_ptr<OnigRegex> re(new OnigRegex());
  re->where_ = where;
  re->code_ = compile_pcre2(text, PCRE2_LITERAL, where, text);
  return re;
}

OnigRegex::~OnigRegex() { pcre2_code_free(code_); }

bool OnigRegex::search(std::string_view text, size_t from, pcre2_match_data* data, size_t* start, size_t* end) const {
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  int rc = pcre2_match(code_, subject, text.size(), from, PCRE2_NO_UTF_CHECK, data, nullptr);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {  // the interpreter keeps its backtracking on the heap
    rc = pcre2_match(code_, subject, text.size(), from, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, data, nullptr);
  }
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) {
    throw Error(where_ + ": regex match failed on a " + std::to_string(text.size()) +
                "-byte piece: " + pcre2_message(rc));
  }
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
  *start = ovector[0];
  *end = ovector[1];
  return true;
}

std::vector<std::pair<size_t, size_t>> OnigRegex::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(code_, nullptr);
  size_t from = 0;
  bool matched_before = false;
  size_t last_match_end = 0;
  try {
    size_t start = 0, end = 0;
    while (from <= text.size() && search(text, from, data, &start, &end)) {
      if (start == end && matched_before && last_match_end == end) {
        // onig's find_iter steps one character on rather than repeat an empty match.
        from += from < text.size() ? std::max<size_t>(1, utf8_sequence_length(text, from)) : 1;
        continue;
      }
      from = end;
      matched_before = true;
      last_match_end = end;
      matches.emplace_back(start, end);
    }
  } catch (...) {
    pcre2_match_data_free(data);
    throw;
  }
  pcre2_match_data_free(data);
  return matches;
}

}  // namespace vkspec::text
