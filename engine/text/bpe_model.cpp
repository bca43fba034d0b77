#include "engine/text/bpe_model.h"

#include <cstdio>
#include <queue>

#include "common/error.h"
#include "engine/text/utf8.h"

namespace vkspec::text {
namespace {

constexpr int64_t kMaxId = (1 << 24) - 1;  // ids index a table: refuse absurd ones
constexpr size_t kCachedWordBytes = 256;   // Hugging Face's MAX_LENGTH for its word cache
constexpr size_t kCacheEntries = 1 << 17;

uint64_t pair_key(int32_t a, int32_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }

struct QueueEntry {
  size_t pos;
  uint32_t rank;
  int32_t new_id;
  // std::priority_queue pops the largest: make that the lowest rank, then the leftmost.
  bool operator<(const QueueEntry& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

BpeModel::BpeModel() : cache_(std::make_unique<Cache>()) {}

BpeModel BpeModel::parse(const JsonNode& node) {
  const std::string type = node.has("type") ? node.type() : "BPE";
  if (type != "BPE") node.at("type").fail("model \"" + type + "\" is not supported (only BPE)");
  if (node.has("dropout")) {
    const JsonNode dropout = node.at("dropout");
    if (!dropout.value().is_number() || dropout.value().get<double>() != 0.0) {
      dropout.fail("BPE dropout is not supported (only null or 0: tokenization would be random)");
    }
  }
  BpeModel m;
  m.file_ = node.file();
  m.read_vocab(node.at("vocab"));
  if (node.has("unk_token")) m.unk_token_ = node.at("unk_token").str();
  m.prefix_ = node.str_or("continuing_subword_prefix", "");
  m.suffix_ = node.str_or("end_of_word_suffix", "");
  m.fuse_unk_ = node.bool_or("fuse_unk", false);
  m.byte_fallback_ = node.bool_or("byte_fallback", false);
  m.ignore_merges_ = node.bool_or("ignore_merges", false);
  m.read_merges(node.at("merges"));
  return m;
}

void BpeModel::read_vocab(const JsonNode& node) {
  if (!node.value().is_object()) node.fail("is not a JSON object of token: id");
  int64_t max_id = -1;
  for (const auto& [token, id] : node.value().items()) {
    const JsonNode entry(id, node.file(), node.path() + "[\"" + escape_for_message(token) + "\"]");
    const int64_t value = entry.integer();
    if (value < 0 || value > kMaxId)
      entry.fail("id " + std::to_string(value) + " is out of range 0.." + std::to_string(kMaxId));
    vocab_.emplace(token, static_cast<int32_t>(value));
    max_id = std::max(max_id, value);
  }
  tokens_.assign(static_cast<size_t>(max_id + 1), std::string());
  has_token_.assign(static_cast<size_t>(max_id + 1), false);
  for (const auto& [token, id] : vocab_) {
    if (has_token_[id]) {
      node.fail("id " + std::to_string(id) + " is given to both \"" + escape_for_message(tokens_[id]) + "\" and \"" +
                escape_for_message(token) + "\" (decoding would be ambiguous)");
    }
    tokens_[id] = token;
    has_token_[id] = true;
  }
}

void BpeModel::read_merges(const JsonNode& node) {
  const size_t n = node.array_size();
  merges_.reserve(n);
  uint32_t rank = 0;
  for (size_t i = 0; i < n; ++i) {
    const JsonNode merge = node.at(i);
    if (merge.value().is_array()) {
      if (merge.array_size() != 2) merge.fail("is not a pair of tokens");
      add_merge(merge.at(0).str(), merge.at(1).str(), rank++, merge);
      continue;
    }
    const std::string line = merge.str();
    if (line.rfind("#version", 0) == 0) continue;  // a merges.txt header; it takes no rank
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
      merge.fail("\"" + escape_for_message(line) + "\" is not two tokens separated by one space");
    }
    add_merge(line.substr(0, space), line.substr(space + 1), rank++, merge);
  }
}

void BpeModel::add_merge(const std::string& a, const std::string& b, uint32_t rank, const JsonNode& where) {
  const auto ia = vocab_.find(a), ib = vocab_.find(b);
  if (ia == vocab_.end()) where.fail("merge token \"" + escape_for_message(a) + "\" is not in the vocab");
  if (ib == vocab_.end()) where.fail("merge token \"" + escape_for_message(b) + "\" is not in the vocab");
  if (b.size() < prefix_.size() || b.compare(0, prefix_.size(), prefix_) != 0) {
    where.fail("merge token \"" + escape_for_message(b) + "\" lacks the continuing_subword_prefix");
  }
  const std::string joined = a + b.substr(prefix_.size());
  const auto ij = vocab_.find(joined);
  if (ij == vocab_.end()) where.fail("merged token \"" + escape_for_message(joined) + "\" is not in the vocab");
  // A pair merged twice keeps the later rank, as Hugging Face's map of merges does.
  merges_[pair_key(ia->second, ib->second)] = Merge{rank, ij->second};
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const {
  const auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens_.size() || !has_token_[id]) return nullptr;
  return &tokens_[id];
}

const BpeModel::Merge* BpeModel::find_merge(int32_t a, int32_t b) const {
  const auto it = merges_.find(pair_key(a, b));
  return it == merges_.end() ? nullptr : &it->second;
}

// Hugging Face's BPE::merge_word before merging: a symbol per character (with the
// continuing_subword_prefix after the first and the end_of_word_suffix on the last), byte
// fallback or unk for characters outside the vocab; with neither, the character is dropped.
std::vector<BpeModel::Symbol> BpeModel::initial_symbols(const std::string& word) const {
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  std::optional<Symbol> unk;
  size_t i = 0;
  while (i < word.size()) {
    const size_t n = std::max<size_t>(1, utf8_sequence_length(word, i));
    std::string piece = word.substr(i, n);
    if (i > 0) piece = prefix_ + piece;
    if (i + n == word.size()) piece += suffix_;
    const auto it = vocab_.find(piece);
    if (it != vocab_.end()) {
      if (unk) symbols.push_back(*unk), unk.reset();
      symbols.push_back({it->second, 0, 0, n});
    } else {
      add_unknown(symbols, unk, piece, n);
    }
    i += n;
  }
  if (unk) symbols.push_back(*unk);
  for (size_t k = 0; k < symbols.size(); ++k) {
    symbols[k].prev = static_cast<int64_t>(k) - 1;
    symbols[k].next = k + 1 < symbols.size() ? static_cast<int64_t>(k) + 1 : -1;
  }
  return symbols;
}

void BpeModel::add_unknown(std::vector<Symbol>& symbols, std::optional<Symbol>& unk, const std::string& piece,
                           size_t byte_len) const {
  if (byte_fallback_) {
    std::vector<int32_t> bytes;
    char name[8];
    for (unsigned char b : piece) {
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      const auto it = vocab_.find(name);
      if (it == vocab_.end()) break;
      bytes.push_back(it->second);
    }
    if (bytes.size() == piece.size()) {
      for (int32_t id : bytes) symbols.push_back({id, 0, 0, 1});
      return;
    }
  }
  if (!unk_token_) return;
  const auto it = vocab_.find(*unk_token_);
  if (it == vocab_.end()) {
    throw Error(file_ + ": model.unk_token \"" + escape_for_message(*unk_token_) + "\" is not in the vocab");
  }
  if (unk && fuse_unk_) {
    unk->len += byte_len;
    return;
  }
  if (unk) symbols.push_back(*unk);
  unk = Symbol{it->second, 0, 0, byte_len};
}

// Word::merge_all without dropout, step for step: stale queue entries are recognised the same
// way (the pair now at the position must merge into the entry's new id).
void BpeModel::merge_all(std::vector<Symbol>& s) const {
  std::priority_queue<QueueEntry> queue;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (const Merge* m = find_merge(s[i].id, s[i + 1].id)) queue.push({i, m->rank, m->new_id});
  }
  while (!queue.empty()) {
    const QueueEntry top = queue.top();
    queue.pop();
    Symbol& cur = s[top.pos];
    if (cur.len == 0 || cur.next == -1) continue;
    const Symbol right = s[cur.next];
    const Merge* m = find_merge(cur.id, right.id);
    if (!m || m->new_id != top.new_id) continue;
    s[cur.next].len = 0;
    cur.id = top.new_id;
    cur.len += right.len;
    cur.next = right.next;
    if (right.next > -1) s[right.next].prev = static_cast<int64_t>(top.pos);
    if (cur.prev >= 0) {
      if (const Merge* p = find_merge(s[cur.prev].id, cur.id)) {
        queue.push({static_cast<size_t>(cur.prev), p->rank, p->new_id});
      }
    }
    if (cur.next > -1) {
      if (const Merge* n = find_merge(cur.id, s[cur.next].id)) queue.push({top.pos, n->rank, n->new_id});
    }
  }
}

void BpeModel::tokenize(const std::string& word, std::vector<int32_t>& ids) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    const auto it = vocab_.find(word);
    if (it != vocab_.end()) return ids.push_back(it->second);
  }
  const bool cacheable = word.size() < kCachedWordBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    const auto it = cache_->words.find(word);
    if (it != cache_->words.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<Symbol> symbols = initial_symbols(word);
  merge_all(symbols);
  std::vector<int32_t> word_ids;
  for (const Symbol& sym : symbols) {
    if (sym.len != 0) word_ids.push_back(sym.id);
  }
  ids.insert(ids.end(), word_ids.begin(), word_ids.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    if (cache_->words.size() < kCacheEntries) cache_->words.emplace(word, std::move(word_ids));
  }
}

}  // namespace vkspec::text
