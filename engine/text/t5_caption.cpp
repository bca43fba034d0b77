#include "engine/text/t5_caption.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <unicode/locid.h>
#include <unicode/unistr.h>

#include <memory>
#include <vector>

#include "common/error.h"

namespace vkspec::text {
namespace {

// A compiled Python-style pattern (UTF, Unicode classes) and its global substitution.
class Sub {
 public:
  Sub(const char* pattern, const char* replacement) : replacement_(replacement) {
    int err = 0;
    PCRE2_SIZE at = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &err,
                          &at, nullptr);
    if (!code_) throw Error(std::string("t5 caption cleaning: bad pattern ") + pattern);
  }
  ~Sub() { pcre2_code_free(code_); }
  Sub(const Sub&) = delete;
  Sub& operator=(const Sub&) = delete;

  std::string operator()(const std::string& s) const {
    std::string out(s.size() * 2 + 64, '\0');
    for (int tries = 0; tries < 8; ++tries) {
      PCRE2_SIZE n = out.size();
      const int rc = pcre2_substitute(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0,
                                      PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH, nullptr, nullptr,
                                      reinterpret_cast<PCRE2_SPTR>(replacement_), PCRE2_ZERO_TERMINATED,
                                      reinterpret_cast<PCRE2_UCHAR*>(out.data()), &n);
      if (rc >= 0) return out.substr(0, n);
      if (rc != PCRE2_ERROR_NOMEMORY) throw Error("t5 caption cleaning: a substitution failed on the prompt");
      out.resize(n + 1);
    }
    throw Error("t5 caption cleaning: the prompt grew without bound");
  }
  int count(const std::string& s) const {
    std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> data(pcre2_match_data_create_from_pattern(code_,
                                                                                                             nullptr),
                                                                        pcre2_match_data_free);
    int n = 0;
    for (PCRE2_SIZE at = 0; at <= s.size();) {
      if (pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), at, 0, data.get(), nullptr) < 0) break;
      const PCRE2_SIZE* v = pcre2_get_ovector_pointer(data.get());
      ++n;
      at = v[1] > v[0] ? v[1] : v[1] + 1;
    }
    return n;
  }

 private:
  pcre2_code* code_ = nullptr;
  const char* replacement_;
};

std::string python_lower(const std::string& s) {
  std::string out;
  icu::UnicodeString::fromUTF8(s).toLower(icu::Locale::getRoot()).toUTF8String(out);
  return out;
}

std::string strip(const std::string& s) {
  static const Sub ends("^\\s+|\\s+$", "");
  return ends(s);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// urllib.parse.unquote_plus: '+' to space, %XX to its byte, invalid UTF-8 to U+FFFD.
std::string unquote_plus(const std::string& s) {
  std::string bytes;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      bytes += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      bytes += static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2]));
      i += 2;
    } else {
      bytes += s[i];
    }
  }
  std::string out;
  icu::UnicodeString::fromUTF8(bytes).toUTF8String(out);  // ill-formed sequences become U+FFFD
  return out;
}

// html.unescape for numeric entities and the common named ones (see the header).
std::string unescape(std::string s) {
  static const Sub named[] = {{"&nbsp;", "\u00a0"}, {"&lt;", "<"},   {"&gt;", ">"},
                              {"&quot;", "\""},     {"&apos;", "'"}, {"&amp;", "&"}};
  for (const Sub& n : named) s = n(s);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '&' && i + 2 < s.size() && s[i + 1] == '#') {
      const bool hex = s[i + 2] == 'x' || s[i + 2] == 'X';
      size_t j = i + (hex ? 3 : 2);
      uint32_t cp = 0;
      size_t digits = 0;
      for (; j < s.size() && digits < 7 && (hex ? hex_value(s[j]) >= 0 : (s[j] >= '0' && s[j] <= '9')); ++j, ++digits)
        cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(hex ? hex_value(s[j]) : s[j] - '0');
      if (digits > 0 && cp > 0 && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF)) {
        std::string ch;
        icu::UnicodeString(static_cast<UChar32>(cp)).toUTF8String(ch);
        out += ch;
        i = j < s.size() && s[j] == ';' ? j : j - 1;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// BeautifulSoup(text, "html.parser").text: the text outside tags, entities decoded.
std::string html_text(const std::string& s) {
  static const Sub comments("<!--[\\s\\S]*?-->", ""), tags("<[A-Za-z/!?][^>]*>", "");
  return unescape(tags(comments(s)));
}

// The substitutions between BeautifulSoup and basic_clean, in the released order.
const std::vector<std::unique_ptr<Sub>>& middle_steps() {
  static const std::vector<std::unique_ptr<Sub>> steps = [] {
    const std::vector<std::pair<const char*, const char*>> table = {
        {R"re(@[\w\d]+\b)re", ""},
        {R"re([\x{31c0}-\x{31ef}]+)re", ""},
        {R"re([\x{31f0}-\x{31ff}]+)re", ""},
        {R"re([\x{3200}-\x{32ff}]+)re", ""},
        {R"re([\x{3300}-\x{33ff}]+)re", ""},
        {R"re([\x{3400}-\x{4dbf}]+)re", ""},
        {R"re([\x{4dc0}-\x{4dff}]+)re", ""},
        {R"re([\x{4e00}-\x{9fff}]+)re", ""},
        {R"re([\x{002D}\x{058A}\x{05BE}\x{1400}\x{1806}\x{2010}-\x{2015}\x{2E17}\x{2E1A}\x{2E3A}\x{2E3B}\x{2E40}\x{301C}\x{3030}\x{30A0}\x{FE31}\x{FE32}\x{FE58}\x{FE63}\x{FF0D}]+)re",
         "-"},
        {"[`\u00b4\u00ab\u00bb\u201c\u201d\u00a8]", "\""},
        {"[\u2018\u2019]", "'"},
        {R"re(&quot;?)re", ""},
        {R"re(&amp)re", ""},
        {R"re(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})re", " "},
        {R"re(\d:\d\d\s+$)re", ""},
        {R"re(\\n)re", " "},
        {R"re(#\d{1,3}\b)re", ""},
        {R"re(#\d{5,}\b)re", ""},
        {R"re(\b\d{6,}\b)re", ""},
        {R"re([\S]+\.(?:png|jpg|jpeg|bmp|webp|eps|pdf|apk|mp4))re", ""},
        {R"re([\"\']{2,})re", "\""},
        {R"re([\.]{2,})re", " "},
        {"[#\u00ae\u2022\u00a9\u2122&@\u00b7\u00ba\u00bd\u00be\u00bf\u00a1\u00a7~\\)\\(\\]\\[\\}\\{\\|\\\\\\/\\*]{1,}",
         " "},
        {R"re(\s+\.\s+)re", " "},
    };
    std::vector<std::unique_ptr<Sub>> v;
    for (const auto& [pattern, replacement] : table) v.push_back(std::make_unique<Sub>(pattern, replacement));
    return v;
  }();
  return steps;
}

// The substitutions after basic_clean, in the released order.
const std::vector<std::unique_ptr<Sub>>& final_steps() {
  static const std::vector<std::unique_ptr<Sub>> steps = [] {
    const std::vector<std::pair<const char*, const char*>> table = {
        {R"re(\b[a-zA-Z]{1,3}\d{3,15}\b)re", ""},
        {R"re(\b[a-zA-Z]+\d+[a-zA-Z]+\b)re", ""},
        {R"re(\b\d+[a-zA-Z]+\d+\b)re", ""},
        {R"re((worldwide\s+)?(free\s+)?shipping)re", ""},
        {R"re((free\s)?download(\sfree)?)re", ""},
        {R"re(\bclick\b\s(?:for|on)\s\w+)re", ""},
        {R"re(\b(?:png|jpg|jpeg|bmp|webp|eps|pdf|apk|mp4)(\simage[s]?)?)re", ""},
        {R"re(\bpage\s+\d+\b)re", ""},
        {R"re(\b\d*[a-zA-Z]+\d+[a-zA-Z]+\d+[a-zA-Z\d]*\b)re", " "},
        {"\\b\\d+\\.?\\d*[x\u0445\u00d7]\\d+\\.?\\d*\\b", ""},
        {R"re(\b\s+\:\s+)re", ": "},
        {R"re((\D[,\./])\b)re", "${1} "},
        {R"re(\s+)re", " "},
        {R"re(^[\"\']([\w\W]+)[\"\']$)re", "${1}"},
        {R"re(^[\'\_,\-\:;])re", ""},
        {R"re([\'\_,\-\:\-\+]$)re", ""},
        {R"re(^\.\S+$)re", ""},
    };
    std::vector<std::unique_ptr<Sub>> v;
    for (const auto& [pattern, replacement] : table) v.push_back(std::make_unique<Sub>(pattern, replacement));
    return v;
  }();
  return steps;
}

std::string clean_once(std::string c) {
  static const Sub person("<person>", "person");
  static const Sub url1(
      R"re(\b((?:https?:(?:\/{1,3}|[a-zA-Z0-9%])|[a-zA-Z0-9.\-]+[.](?:com|co|ru|net|org|edu|gov|it)[\w/-]*\b\/?(?!@))))re",
      "");
  static const Sub url2(
      R"re(\b((?:www:(?:\/{1,3}|[a-zA-Z0-9%])|[a-zA-Z0-9.\-]+[.](?:com|co|ru|net|org|edu|gov|it)[\w/-]*\b\/?(?!@))))re",
      "");
  static const Sub dash_or_underscore(R"re((?:\-|\_))re", " ");
  c = python_lower(strip(unquote_plus(c)));
  c = html_text(url2(url1(person(c))));
  for (const auto& step : middle_steps()) c = (*step)(c);
  if (dash_or_underscore.count(c) > 3) c = dash_or_underscore(c);  // this-is-my-cute-cat
  c = strip(unescape(unescape(c)));                                // basic_clean, but ftfy (see the header)
  for (const auto& step : final_steps()) c = (*step)(c);
  return strip(c);
}

}  // namespace

std::string t5_caption_text(const std::string& caption) { return clean_once(clean_once(caption)); }

}  // namespace vkspec::text
