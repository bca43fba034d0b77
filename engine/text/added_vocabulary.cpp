#include "engine/text/added_vocabulary.h"

#include <algorithm>

#include "engine/text/unicode.h"
#include "engine/text/utf8.h"

namespace vkspec::text {
namespace {

bool same_flags(const AddedToken& a, const AddedToken& b) {
  return a.single_word == b.single_word && a.lstrip == b.lstrip && a.rstrip == b.rstrip &&
         a.normalized == b.normalized && a.special == b.special;
}

size_t char_start_before(std::string_view s, size_t end) {
  size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
  return start;
}

// The regex crate's \w$ on s[..end] and ^\w on s[start..].
bool word_char_before(std::string_view s, size_t end) {
  size_t n = 0;
  return end > 0 && is_word_char(decode_utf8(s, char_start_before(s, end), &n));
}
bool word_char_at(std::string_view s, size_t start) {
  size_t n = 0;
  return start < s.size() && is_word_char(decode_utf8(s, start, &n));
}

// Where the whitespace that ends s[..end] starts, and where the whitespace that starts s[start..]
// ends (the regex crate's \s*$ and ^\s*).
size_t whitespace_start_before(std::string_view s, size_t end) {
  size_t n = 0;
  while (end > 0) {
    const size_t start = char_start_before(s, end);
    if (!is_white_space(decode_utf8(s, start, &n))) break;
    end = start;
  }
  return end;
}
size_t whitespace_end_after(std::string_view s, size_t start) {
  size_t n = 0;
  while (start < s.size() && is_white_space(decode_utf8(s, start, &n))) start += n;
  return start;
}

AddedToken read_token(const JsonNode& node) {
  AddedToken t;
  t.content = node.at("content").str();
  const int64_t id = node.at("id").integer();
  if (id < 0 || id > INT32_MAX) node.at("id").fail("is out of range");
  t.id = static_cast<int32_t>(id);
  t.single_word = node.bool_or("single_word", false);
  t.lstrip = node.bool_or("lstrip", false);
  t.rstrip = node.bool_or("rstrip", false);
  t.normalized = node.bool_or("normalized", true);
  t.special = node.bool_or("special", false);
  return t;
}

}  // namespace

void AddedVocabulary::Trie::insert(const std::string& pattern, int32_t id) {
  size_t node = 0;
  for (unsigned char b : pattern) {
    const auto it = nodes_[node].next.find(b);
    if (it != nodes_[node].next.end()) {
      node = it->second;
      continue;
    }
    nodes_[node].next.emplace(b, static_cast<int32_t>(nodes_.size()));
    node = nodes_.size();
    nodes_.emplace_back();
  }
  // Of two equal patterns the first keeps the match, as the first pattern does in Aho-Corasick.
  if (nodes_[node].id < 0) nodes_[node].id = id;
}

size_t AddedVocabulary::Trie::longest_at(std::string_view text, size_t pos, int32_t* id) const {
  size_t node = 0, best = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto it = nodes_[node].next.find(static_cast<unsigned char>(text[i]));
    if (it == nodes_[node].next.end()) break;
    node = it->second;
    if (nodes_[node].id >= 0) best = i + 1 - pos, *id = nodes_[node].id;
  }
  return best;
}

AddedVocabulary AddedVocabulary::parse(const JsonNode& node, const BpeModel& model, const Normalizer& normalizer) {
  AddedVocabulary v;
  if (node.is_null()) return v;
  std::vector<AddedToken> list;
  std::vector<JsonNode> places;
  for (size_t i = 0; i < node.array_size(); ++i) {
    places.push_back(node.at(i));
    list.push_back(read_token(places.back()));
  }
  std::vector<AddedToken> order;  // special ones first, then the others: the tries' pattern order
  for (const AddedToken& t : list) {
    if (t.special && !t.content.empty() && v.special_.insert(t.content).second) order.push_back(t);
  }
  // Hugging Face numbers the tokens not in the vocab from the vocab's entry count on.
  auto next_id = static_cast<int32_t>(model.vocab_entries());
  for (size_t i = 0; i < list.size(); ++i) {
    v.add(list[i], model, &next_id, places[i]);
    if (!list[i].content.empty() && !v.is_special_content(list[i].content)) order.push_back(list[i]);
  }
  for (const AddedToken& t : order) {
    const int32_t id = *v.token_to_id(t.content);
    if (!t.normalized) {
      v.raw_trie_.insert(t.content, id);
      continue;
    }
    std::string pattern = t.content;
    normalizer.apply(pattern);
    if (pattern.empty()) node.fail("added token \"" + escape_for_message(t.content) + "\" normalizes to nothing");
    v.normalized_trie_.insert(pattern, id);
  }
  return v;
}

void AddedVocabulary::add(const AddedToken& token, const BpeModel& model, int32_t* next_id, const JsonNode& where) {
  if (token.content.empty()) return;
  const auto known = ids_.find(token.content);
  if (known != ids_.end()) {
    if (same_flags(tokens_[known->second], token)) return;
    where.fail("added token \"" + escape_for_message(token.content) + "\" is listed twice with different flags");
  }
  const std::optional<int32_t> in_vocab = model.token_to_id(token.content);
  const int32_t id = in_vocab ? *in_vocab : (*next_id)++;
  if (id != token.id) {
    where.fail("added token \"" + escape_for_message(token.content) + "\" has id " + std::to_string(token.id) +
               " but Hugging Face's tokenizers gives it " + std::to_string(id) +
               (in_vocab ? " (its id in the vocab)" : " (the next id after the vocab)"));
  }
  ids_.emplace(token.content, id);
  tokens_[id] = token;
}

// AddedVocabulary::find_matches: the tokens' non-overlapping leftmost-longest matches (a
// match single_word rejects is still passed over), widened by lstrip and rstrip, with the text
// between them.
std::vector<AddedVocabulary::Match> AddedVocabulary::find_matches(std::string_view sentence, const Trie& trie) const {
  std::vector<Match> out;
  size_t start_offset = 0, pos = 0;
  while (pos < sentence.size()) {
    int32_t id = -1;
    const size_t len = trie.longest_at(sentence, pos, &id);
    if (len == 0) {
      ++pos;
      continue;
    }
    size_t start = pos, stop = pos + len;
    pos = stop;
    const AddedToken& token = tokens_.at(id);
    if (token.single_word && (word_char_before(sentence, start) || word_char_at(sentence, stop))) continue;
    if (token.lstrip) start = std::max(whitespace_start_before(sentence, start), start_offset);
    if (token.rstrip) stop = whitespace_end_after(sentence, stop);
    if (start_offset < start) out.push_back({start_offset, start, -1});
    out.push_back({start, stop, id});
    start_offset = stop;
  }
  if (start_offset != sentence.size()) out.push_back({start_offset, sentence.size(), -1});
  return out;
}

void AddedVocabulary::split_with(std::vector<TextPiece>& pieces, const Trie& trie, const Normalizer* normalizer) const {
  std::vector<TextPiece> out;
  out.reserve(pieces.size());
  for (TextPiece& piece : pieces) {
    if (piece.id >= 0) {
      out.push_back(std::move(piece));
      continue;
    }
    if (normalizer) normalizer->apply(piece.text);
    if (trie.empty()) {
      if (!piece.text.empty()) out.push_back(std::move(piece));
      continue;
    }
    for (const Match& m : find_matches(piece.text, trie)) {
      if (m.end > m.start) out.push_back({piece.text.substr(m.start, m.end - m.start), m.id});
    }
  }
  pieces = std::move(out);
}

std::vector<TextPiece> AddedVocabulary::extract_and_normalize(std::string_view text,
                                                              const Normalizer& normalizer) const {
  std::vector<TextPiece> pieces{{std::string(text), -1}};
  split_with(pieces, raw_trie_, nullptr);
  split_with(pieces, normalized_trie_, normalizer.empty() ? nullptr : &normalizer);
  return pieces;
}

const AddedToken* AddedVocabulary::find(int32_t id) const {
  const auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : &it->second;
}

std::optional<int32_t> AddedVocabulary::token_to_id(std::string_view content) const {
  const auto it = ids_.find(std::string(content));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

bool AddedVocabulary::is_special_content(const std::string& content) const { return special_.count(content) > 0; }

int32_t AddedVocabulary::max_id() const {
  int32_t m = -1;
  for (const auto& [id, token] : tokens_) m = std::max(m, id);
  return m;
}

}  // namespace vkspec::text
