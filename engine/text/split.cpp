#include "engine/text/split.h"

namespace vkspec::text {

SplitBehavior parse_split_behavior(const JsonNode& node) {
  const std::string name = node.str();
  if (name == "Removed") return SplitBehavior::Removed;
  if (name == "Isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous") return SplitBehavior::Contiguous;
  node.fail("\"" + name + "\" is not a split behavior (Removed, Isolated, MergedWithPrevious, MergedWithNext, " +
            "Contiguous)");
}

std::vector<Span> spans_from_matches(size_t size, const std::vector<std::pair<size_t, size_t>>& matches) {
  if (size == 0) return {{0, 0, false}};
  std::vector<Span> spans;
  size_t prev = 0;
  for (const auto& [start, end] : matches) {
    if (prev != start) spans.push_back({prev, start, false});
    spans.push_back({start, end, true});
    prev = end;
  }
  if (prev != size) spans.push_back({prev, size, false});
  return spans;
}

namespace {

// The folds of NormalizedString::split, kept as written there: each returns (span, remove).
std::vector<std::pair<Span, bool>> merge_spans(const std::vector<Span>& spans, SplitBehavior behavior) {
  std::vector<std::pair<Span, bool>> out;
  bool previous_match = false;
  if (behavior == SplitBehavior::MergedWithNext) {
    for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
      if (it->match && !previous_match && !out.empty()) {
        out.back().first.start = it->start;
      } else {
        out.push_back({*it, false});
      }
      previous_match = it->match;
    }
    return {out.rbegin(), out.rend()};
  }
  for (const Span& s : spans) {
    if (behavior == SplitBehavior::Removed) {
      out.push_back({s, s.match});
    } else if (behavior == SplitBehavior::Isolated) {
      out.push_back({s, false});
    } else if (behavior == SplitBehavior::Contiguous && s.match == previous_match && !out.empty()) {
      out.back().first.end = s.end;
    } else if (behavior == SplitBehavior::MergedWithPrevious && s.match && !previous_match && !out.empty()) {
      out.back().first.end = s.end;
    } else {
      out.push_back({s, false});
    }
    previous_match = s.match;
  }
  return out;
}

}  // namespace

void split_spans(std::string_view text, const std::vector<Span>& spans, SplitBehavior behavior,
                 std::vector<std::string>& out) {
  for (const auto& [span, remove] : merge_spans(spans, behavior)) {
    if (!remove && span.end > span.start) out.emplace_back(text.substr(span.start, span.end - span.start));
  }
}

}  // namespace vkspec::text
