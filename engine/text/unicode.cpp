#include "engine/text/unicode.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/uscript.h>

#include "common/error.h"

namespace vkspec::text {

bool is_white_space(char32_t c) { return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE); }

bool is_word_char(char32_t c) {
  const auto cp = static_cast<UChar32>(c);
  if (u_hasBinaryProperty(cp, UCHAR_ALPHABETIC) || u_hasBinaryProperty(cp, UCHAR_JOIN_CONTROL)) return true;
  const int32_t mask = U_GET_GC_MASK(cp);
  return (mask & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0;
}

bool lookup_unicode_property(const std::string& name, UnicodeProperty* property) {
  const int32_t mask = u_getPropertyValueEnum(UCHAR_GENERAL_CATEGORY_MASK, name.c_str());
  if (mask != UCHAR_INVALID_CODE) {
    const char* short_name = u_getPropertyValueName(UCHAR_GENERAL_CATEGORY_MASK, mask, U_SHORT_PROPERTY_NAME);
    property->script = false;
    property->category_mask = static_cast<uint32_t>(mask);
    // PCRE2 calls the cased letters L&.
    property->pcre2 = std::string("\\p{") + (std::string(short_name) == "LC" ? "L&" : short_name) + "}";
    return true;
  }
  const int32_t script = u_getPropertyValueEnum(UCHAR_SCRIPT, name.c_str());
  if (script == UCHAR_INVALID_CODE) return false;
  property->script = true;
  property->script_code = script;
  property->pcre2 = std::string("\\p{sc:") + u_getPropertyValueName(UCHAR_SCRIPT, script, U_LONG_PROPERTY_NAME) + "}";
  return true;
}

bool has_unicode_property(char32_t c, const UnicodeProperty& property) {
  const auto cp = static_cast<UChar32>(c);
  if (!property.script) return (static_cast<uint32_t>(U_GET_GC_MASK(cp)) & property.category_mask) != 0;
  UErrorCode status = U_ZERO_ERROR;
  return uscript_getScript(cp, &status) == property.script_code && U_SUCCESS(status);
}

bool covers_unassigned(const UnicodeProperty& property) {
  return property.script ? property.script_code == USCRIPT_UNKNOWN : (property.category_mask & U_GC_CN_MASK) != 0;
}

std::string normalize_unicode(std::string_view text, NormalForm form, const std::string& where) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* normalizer = nullptr;
  switch (form) {
    case NormalForm::Nfc: normalizer = icu::Normalizer2::getNFCInstance(status); break;
    case NormalForm::Nfd: normalizer = icu::Normalizer2::getNFDInstance(status); break;
    case NormalForm::Nfkc: normalizer = icu::Normalizer2::getNFKCInstance(status); break;
    case NormalForm::Nfkd: normalizer = icu::Normalizer2::getNFKDInstance(status); break;
  }
  std::string out;
  if (U_SUCCESS(status)) {
    icu::StringByteSink<std::string> sink(&out, static_cast<int32_t>(text.size()));
    normalizer->normalizeUTF8(0, icu::StringPiece(text.data(), static_cast<int32_t>(text.size())), sink, nullptr,
                              status);
  }
  if (U_FAILURE(status)) throw Error(where + ": Unicode normalization failed: " + u_errorName(status));
  return out;
}

}  // namespace vkspec::text
