#include "engine/text/pre_tokenizer.h"

#include <unicode/uchar.h>

#include "engine/text/byte_level.h"
#include "engine/text/normalizer.h"
#include "engine/text/utf8.h"

namespace vkspec::text {
namespace {

// Digits' pattern: one match per character Rust's char::is_numeric takes (Nd, Nl, No).
std::vector<std::pair<size_t, size_t>> numeric_chars(const std::string& s) {
  std::vector<std::pair<size_t, size_t>> matches;
  size_t i = 0, n = 0;
  while (i < s.size()) {
    const char32_t c = decode_utf8(s, i, &n);
    if (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_N_MASK) matches.emplace_back(i, i + n);
    i += n;
  }
  return matches;
}

}  // namespace

PreTokenizer PreTokenizer::parse(const JsonNode& node) {
  PreTokenizer p;
  if (!node.is_null()) p.add(node);
  return p;
}

void PreTokenizer::add(const JsonNode& node) {
  const std::string type = node.type();
  Step step{Kind::Split};
  if (type == "Sequence") {
    const JsonNode list = node.at("pretokenizers");
    for (size_t i = 0; i < list.array_size(); ++i) add(list.at(i));
    return;
  } else if (type == "Split") {
    step.pattern = parse_pattern(node.at("pattern"));
    step.behavior = parse_split_behavior(node.at("behavior"));
    step.invert = node.at("invert").boolean();
  } else if (type == "ByteLevel") {
    step.kind = Kind::ByteLevel;
    step.add_prefix_space = node.bool_or("add_prefix_space", true);
    if (node.bool_or("use_regex", true)) {
      step.pattern = OnigRegex::compile(kGpt2SplitRegex, node.file() + ": " + node.path() + " (GPT-2's regex)");
    }
  } else if (type == "Digits") {
    step.kind = Kind::Digits;
    step.individual_digits = node.bool_or("individual_digits", false);
  } else {
    node.at("type").fail("pre-tokenizer \"" + type +
                         "\" is not supported (supported: Sequence, Split, ByteLevel, Digits)");
  }
  steps_.push_back(std::move(step));
}

void PreTokenizer::apply_step(const Step& step, const std::string& piece, std::vector<std::string>& out) {
  if (step.kind == Kind::Digits) {
    const auto behavior = step.individual_digits ? SplitBehavior::Isolated : SplitBehavior::Contiguous;
    split_spans(piece, spans_from_matches(piece.size(), numeric_chars(piece)), behavior, out);
    return;
  }
  if (step.kind == Kind::Split) {
    std::vector<Span> spans = spans_from_matches(piece.size(), step.pattern->find_all(piece));
    if (step.invert) {
      for (Span& s : spans) s.match = !s.match;
    }
    split_spans(piece, spans, step.behavior, out);
    return;
  }
  // ByteLevel: the prefix space goes on every piece that lacks one, then the words are mapped
  // to the byte-level alphabet.
  const std::string text = step.add_prefix_space && piece.rfind(' ', 0) != 0 ? " " + piece : piece;
  const size_t first = out.size();
  if (step.pattern) {
    split_spans(text, spans_from_matches(text.size(), step.pattern->find_all(text)), SplitBehavior::Isolated, out);
  } else if (!text.empty()) {
    out.push_back(text);
  }
  for (size_t i = first; i < out.size(); ++i) out[i] = to_byte_level(out[i]);
}

void PreTokenizer::apply(std::vector<std::string>& pieces) const {
  for (const Step& step : steps_) {
    std::vector<std::string> next;
    next.reserve(pieces.size());
    for (const std::string& piece : pieces) {
      // Hugging Face never holds an empty piece (its splits drop them): ByteLevel would give it a space.
      if (!piece.empty()) apply_step(step, piece, next);
    }
    pieces = std::move(next);
  }
}

}  // namespace vkspec::text
