#pragma once
// A value of a tokenizer.json with where it is (the file and the JSON path, e.g.
// `pre_tokenizer.pretokenizers[1].pattern`), so that every error names both.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace vkspec::text {

class JsonNode {
 public:
  JsonNode(const nlohmann::json& value, const std::string& file, std::string path);

  const nlohmann::json& value() const { return *value_; }
  const std::string& file() const { return *file_; }
  const std::string& path() const { return path_; }
  bool is_null() const { return value_->is_null(); }

  // Present and not null.
  bool has(const std::string& key) const;
  // Required (absent or null is an error) and, for index, the array element.
  JsonNode at(const std::string& key) const;
  JsonNode at(size_t index) const;
  size_t array_size() const;  // an error unless an array

  std::string str() const;
  bool boolean() const;
  int64_t integer() const;
  // Absent or null keys take the fallback, as Hugging Face's serde defaults do.
  bool bool_or(const std::string& key, bool fallback) const;
  std::string str_or(const std::string& key, const std::string& fallback) const;
  // The "type" field of a normalizer, pre-tokenizer, model, post-processor or decoder.
  std::string type() const;

  [[noreturn]] void fail(const std::string& what) const;

 private:
  const nlohmann::json* value_;
  const std::string* file_;
  std::string path_;
};

}  // namespace vkspec::text
