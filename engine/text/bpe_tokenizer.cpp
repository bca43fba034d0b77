#include "engine/text/bpe_tokenizer.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "engine/text/added_vocabulary.h"
#include "engine/text/bpe_model.h"
#include "engine/text/decoder.h"
#include "engine/text/json_node.h"
#include "engine/text/normalizer.h"
#include "engine/text/post_processor.h"
#include "engine/text/pre_tokenizer.h"
#include "engine/text/utf8.h"

namespace vkspec::text {

struct BpeTokenizer::Impl {
  std::string name;
  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  BpeModel model;
  AddedVocabulary added;
  PostProcessor post_processor;
  Decoder decoder;
  int64_t vocab_size = 0;
};

namespace {

// Top-level settings that would change the ids and are not implemented.
void refuse_unsupported(const JsonNode& root) {
  if (root.has("version") && root.at("version").str() != "1.0") {
    root.at("version").fail("tokenizer.json version \"" + root.at("version").str() + "\" is not supported (only 1.0)");
  }
  if (root.has("truncation")) root.at("truncation").fail("truncation is not supported (only null)");
  if (root.has("padding")) root.at("padding").fail("padding is not supported (only null)");
}

const JsonNode optional_node(const JsonNode& root, const std::string& key) {
  static const nlohmann::json kNull;
  return root.has(key) ? root.at(key) : JsonNode(kNull, root.file(), key);
}

}  // namespace

BpeTokenizer::BpeTokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

BpeTokenizer BpeTokenizer::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open tokenizer.json (missing or unreadable)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(path + ": read error");
  return from_json_text(text.str(), path);
}

BpeTokenizer BpeTokenizer::from_json_text(const std::string& json_text, const std::string& name) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(name + ": not valid JSON: " + e.what());
  }
  const JsonNode root(doc, name, "");
  if (!doc.is_object()) root.fail("is not a JSON object (a Hugging Face tokenizer.json)");
  refuse_unsupported(root);
  auto impl = std::make_shared<Impl>();
  impl->name = name;
  impl->normalizer = Normalizer::parse(optional_node(root, "normalizer"));
  impl->pre_tokenizer = PreTokenizer::parse(optional_node(root, "pre_tokenizer"));
  impl->model = BpeModel::parse(root.at("model"));
  impl->added = AddedVocabulary::parse(optional_node(root, "added_tokens"), impl->model, impl->normalizer);
  impl->post_processor = PostProcessor::parse(optional_node(root, "post_processor"));
  impl->decoder = Decoder::parse(optional_node(root, "decoder"));
  impl->vocab_size = std::max<int64_t>(impl->model.max_id(), impl->added.max_id()) + 1;
  return BpeTokenizer(std::move(impl));
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  const size_t bad = first_invalid_utf8(text);
  if (bad != text.size()) {
    throw Error(impl_->name + ": cannot encode text that is not valid UTF-8 (byte " + std::to_string(bad) + " of \"" +
                escape_for_message(text) + "\")");
  }
  std::vector<int32_t> ids;
  std::vector<std::string> words;
  for (TextPiece& piece : impl_->added.extract_and_normalize(text, impl_->normalizer)) {
    if (piece.id >= 0) {
      ids.push_back(piece.id);
      continue;
    }
    words.clear();
    words.push_back(std::move(piece.text));
    impl_->pre_tokenizer.apply(words);
    for (const std::string& word : words) impl_->model.tokenize(word, ids);
  }
  impl_->post_processor.apply(ids, add_special_tokens);
  return ids;
}

const std::string* BpeTokenizer::token_of(int32_t id) const {
  if (const AddedToken* added = impl_->added.find(id)) return &added->content;
  return impl_->model.id_to_token(id);
}

std::string BpeTokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    const std::string* token = token_of(id);
    if (!token) {
      throw Error(impl_->name + ": cannot decode id " + std::to_string(id) + ": no token has it (vocab size " +
                  std::to_string(impl_->vocab_size) + ")");
    }
    if (skip_special_tokens && impl_->added.is_special_content(*token)) continue;
    tokens.push_back(*token);
  }
  return impl_->decoder.decode(std::move(tokens));
}

std::optional<int32_t> BpeTokenizer::token_to_id(std::string_view token) const {
  if (const auto id = impl_->added.token_to_id(token)) return id;
  return impl_->model.token_to_id(token);
}

std::string BpeTokenizer::id_to_token(int32_t id) const {
  const std::string* token = token_of(id);
  if (!token) {
    throw Error(impl_->name + ": no token has id " + std::to_string(id) + " (vocab size " +
                std::to_string(impl_->vocab_size) + ")");
  }
  return *token;
}

int64_t BpeTokenizer::vocab_size() const { return impl_->vocab_size; }

bool BpeTokenizer::is_special(int32_t id) const {
  const AddedToken* added = impl_->added.find(id);
  return added && added->special;
}

const std::string& BpeTokenizer::name() const { return impl_->name; }

}  // namespace vkspec::text
