#include "engine/text/post_processor.h"

#include "engine/text/utf8.h"

namespace vkspec::text {

PostProcessor PostProcessor::parse(const JsonNode& node) {
  PostProcessor p;
  if (!node.is_null()) p.add(node);
  return p;
}

void PostProcessor::add(const JsonNode& node) {
  const std::string type = node.type();
  if (type == "Sequence") {
    const JsonNode list = node.at("processors");
    for (size_t i = 0; i < list.array_size(); ++i) add(list.at(i));
  } else if (type == "TemplateProcessing") {
    add_template(node);
  } else if (type == "BertProcessing" || type == "RobertaProcessing") {
    add_cls_sep(node);
  } else if (type != "ByteLevel") {
    node.at("type").fail("post-processor \"" + type +
                         "\" is not supported (supported: TemplateProcessing, BertProcessing, RobertaProcessing, "
                         "ByteLevel, Sequence)");
  }
}

void PostProcessor::add_template(const JsonNode& node) {
  const JsonNode single = node.at("single");
  static const nlohmann::json kNone = nlohmann::json::object();
  const JsonNode specials =
      node.has("special_tokens") ? node.at("special_tokens") : JsonNode(kNone, node.file(), node.path());
  std::vector<Piece> pieces;
  for (size_t i = 0; i < single.array_size(); ++i) {
    const JsonNode piece = single.at(i);
    if (piece.has("Sequence")) {
      const std::string id = piece.at("Sequence").at("id").str();
      if (id != "A") piece.fail("a single-sequence template can only hold sequence A, not " + id);
      pieces.push_back({true, {}});
      continue;
    }
    const std::string name = piece.at("SpecialToken").at("id").str();
    if (!specials.value().is_object() || !specials.has(name)) {
      piece.fail("special token \"" + escape_for_message(name) + "\" is not in special_tokens");
    }
    const JsonNode ids = specials.at(name).at("ids");
    Piece special;
    for (size_t k = 0; k < ids.array_size(); ++k) {
      const int64_t id = ids.at(k).integer();
      if (id < 0 || id > INT32_MAX) ids.at(k).fail("is not a token id");
      special.ids.push_back(static_cast<int32_t>(id));
    }
    pieces.push_back(std::move(special));
  }
  templates_.push_back(std::move(pieces));
}

void PostProcessor::add_cls_sep(const JsonNode& node) {
  const auto id_of = [](const JsonNode& pair) { return static_cast<int32_t>(pair.at(1).integer()); };
  templates_.push_back({{false, {id_of(node.at("cls"))}}, {true, {}}, {false, {id_of(node.at("sep"))}}});
}

void PostProcessor::apply(std::vector<int32_t>& ids, bool add_special_tokens) const {
  if (!add_special_tokens) return;
  for (const auto& pieces : templates_) {
    std::vector<int32_t> out;
    for (const Piece& p : pieces) {
      const std::vector<int32_t>& part = p.sequence ? ids : p.ids;
      out.insert(out.end(), part.begin(), part.end());
    }
    ids = std::move(out);
  }
}

}  // namespace vkspec::text
