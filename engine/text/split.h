#pragma once
// How Hugging Face's NormalizedString::split cuts a piece of text at a pattern's matches
// (SplitDelimiterBehavior), for the Split and Digits pre-tokenizers.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/text/json_node.h"

namespace vkspec::text {

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

SplitBehavior parse_split_behavior(const JsonNode& node);

// A stretch of the text and whether the pattern matched it. A list of spans covers the text.
struct Span {
  size_t start;
  size_t end;
  bool match;
};

// The spans of a text of `size` bytes around ordered, non-overlapping matches, as
// Pattern::find_matches gives them (an empty text is one empty non-match span).
std::vector<Span> spans_from_matches(size_t size, const std::vector<std::pair<size_t, size_t>>& matches);

// Appends the pieces `behavior` makes of `spans` over `text` to `out`; empty pieces are dropped,
// as PreTokenizedString::split drops them.
void split_spans(std::string_view text, const std::vector<Span>& spans, SplitBehavior behavior,
                 std::vector<std::string>& out);

}  // namespace vkspec::text
