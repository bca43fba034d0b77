#pragma once
// A tokenizer.json's "added_tokens", as Hugging Face's AddedVocabulary handles them: the ids it
// assigns (a token in the vocab keeps its id, the others follow the vocab), and how they are cut
// out of a text before the pre-tokenizer sees it: tokens with normalized = false are found in the
// raw text, the others in the normalized text between those; leftmost-longest matches, then
// single_word (no word character on either side), lstrip and rstrip (the match takes the
// whitespace beside it).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/text/bpe_model.h"
#include "engine/text/json_node.h"
#include "engine/text/normalizer.h"

namespace vkspec::text {

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool single_word = false, lstrip = false, rstrip = false, normalized = true, special = false;
};

// A stretch of the text: an added token (id >= 0) or normalized text for the pre-tokenizer.
struct TextPiece {
  std::string text;
  int32_t id = -1;
};

class AddedVocabulary {
 public:
  // Throws vkspec::Error naming the file and token when the id a token gets is not the one the
  // file gives it (Hugging Face would use its own and only warn).
  static AddedVocabulary parse(const JsonNode& node, const BpeModel& model, const Normalizer& normalizer);

  std::vector<TextPiece> extract_and_normalize(std::string_view text, const Normalizer& normalizer) const;

  const AddedToken* find(int32_t id) const;
  std::optional<int32_t> token_to_id(std::string_view content) const;
  bool is_special_content(const std::string& content) const;
  int32_t max_id() const;  // -1 when there is none

 private:
  // A byte trie over the tokens' contents (normalized ones by the normalizer).
  class Trie {
   public:
    void insert(const std::string& pattern, int32_t id);
    // The longest pattern starting at text[pos]: its length (0 when none) and id.
    size_t longest_at(std::string_view text, size_t pos, int32_t* id) const;
    bool empty() const { return nodes_.size() <= 1; }

   private:
    struct Node {
      std::unordered_map<unsigned char, int32_t> next;
      int32_t id = -1;
    };
    std::vector<Node> nodes_{Node{}};
  };
  struct Match {
    size_t start, end;
    int32_t id;  // -1: text between tokens
  };

  void add(const AddedToken& token, const BpeModel& model, int32_t* next_id, const JsonNode& where);
  std::vector<Match> find_matches(std::string_view sentence, const Trie& trie) const;
  void split_with(std::vector<TextPiece>& pieces, const Trie& trie, const Normalizer* normalizer) const;

  std::unordered_map<std::string, int32_t> ids_;
  std::unordered_map<int32_t, AddedToken> tokens_;
  std::unordered_set<std::string> special_;
  Trie raw_trie_, normalized_trie_;
};

}  // namespace vkspec::text
