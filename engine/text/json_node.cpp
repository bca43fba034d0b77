#include "engine/text/json_node.h"

#include "common/error.h"

namespace vkspec::text {

JsonNode::JsonNode(const nlohmann::json& value, const std::string& file, std::string path)
    : value_(&value), file_(&file), path_(std::move(path)) {}

bool JsonNode::has(const std::string& key) const {
  if (!value_->is_object()) return false;
  const auto it = value_->find(key);
  return it != value_->end() && !it->is_null();
}

JsonNode JsonNode::at(const std::string& key) const {
  if (!value_->is_object()) fail("is not a JSON object");
  const std::string child = path_.empty() ? key : path_ + "." + key;
  const auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) {
    throw Error(*file_ + ": " + child + ": missing (required)");
  }
  return JsonNode(*it, *file_, child);
}

JsonNode JsonNode::at(size_t index) const {
  if (!value_->is_array()) fail("is not a JSON array");
  if (index >= value_->size()) fail("has no element " + std::to_string(index));
  return JsonNode((*value_)[index], *file_, path_ + "[" + std::to_string(index) + "]");
}

size_t JsonNode::array_size() const {
  if (!value_->is_array()) fail("is not a JSON array");
  return value_->size();
}

std::string JsonNode::str() const {
  if (!value_->is_string()) fail("is not a string");
  return value_->get<std::string>();
}

bool JsonNode::boolean() const {
  if (!value_->is_boolean()) fail("is not true or false");
  return value_->get<bool>();
}

int64_t JsonNode::integer() const {
  if (!value_->is_number_integer()) fail("is not an integer");
  return value_->get<int64_t>();
}

bool JsonNode::bool_or(const std::string& key, bool fallback) const { return has(key) ? at(key).boolean() : fallback; }

std::string JsonNode::str_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? at(key).str() : fallback;
}

std::string JsonNode::type() const { return at("type").str(); }

void JsonNode::fail(const std::string& what) const {
  throw Error(*file_ + ": " + (path_.empty() ? std::string("top level") : path_) + ": " + what);
}

}  // namespace vkspec::text
