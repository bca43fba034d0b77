#pragma once
// The BPE "model" of a tokenizer.json: vocab, merges (ranked by their order), and the merge loop
// of Hugging Face's Word::merge_all (lowest rank first, leftmost on ties), with ignore_merges,
// unk_token (fuse_unk), byte_fallback, continuing_subword_prefix and end_of_word_suffix. Words
// under 256 bytes are cached, as Hugging Face does.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/text/json_node.h"

namespace vkspec::text {

class BpeModel {
 public:
  // Throws vkspec::Error naming the file and key: not BPE, dropout, a merge of tokens not in the
  // vocab, duplicate ids...
  static BpeModel parse(const JsonNode& node);
  BpeModel();

  // Appends the ids of one word (a pre-tokenizer's piece).
  void tokenize(const std::string& word, std::vector<int32_t>& ids) const;

  std::optional<int32_t> token_to_id(std::string_view token) const;
  const std::string* id_to_token(int32_t id) const;  // null when no vocab entry has the id
  size_t vocab_entries() const { return vocab_.size(); }
  int32_t max_id() const { return static_cast<int32_t>(tokens_.size()) - 1; }

 private:
  struct Merge {
    uint32_t rank;
    int32_t new_id;
  };
  struct Symbol {
    int32_t id;
    int64_t prev, next;
    size_t len;
  };
  void read_vocab(const JsonNode& node);
  void read_merges(const JsonNode& node);
  void add_merge(const std::string& a, const std::string& b, uint32_t rank, const JsonNode& where);
  std::vector<Symbol> initial_symbols(const std::string& word) const;
  void add_unknown(std::vector<Symbol>& symbols, std::optional<Symbol>& unk, const std::string& piece,
                   size_t byte_len) const;
  void merge_all(std::vector<Symbol>& symbols) const;
  const Merge* find_merge(int32_t a, int32_t b) const;

  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> tokens_;  // by id; an id with no entry has an empty string
  std::vector<bool> has_token_;
  std::unordered_map<uint64_t, Merge> merges_;
  std::optional<std::string> unk_token_;
  std::string prefix_, suffix_;  // continuing_subword_prefix, end_of_word_suffix
  bool fuse_unk_ = false, byte_fallback_ = false, ignore_merges_ = false;
  std::string file_;  // for errors while encoding

  struct Cache {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<int32_t>> words;
  };
  std::unique_ptr<Cache> cache_;  // a pointer: the model moves, the mutex cannot
};

}  // namespace vkspec::text
