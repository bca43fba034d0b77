#include "engine/model/text_table.h"

#include <cstring>

#include "common/error.h"
#include "engine/vk/tensor.h"

namespace vkspec {

namespace {
constexpr size_t kMaxPromptBytes = 1 << 16;

float element_f32(StDType dtype, const uint8_t* p) {
  if (dtype == StDType::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dtype == StDType::BF16 ? bf16_to_float(h) : half_to_float(h);
}
}  // namespace

std::vector<float> text_table_rows(const SafetensorsFile& file, const std::string& table,
                                   const std::vector<int32_t>& ids, const std::string& model) {
  const StTensorInfo& t = file.info(table);
  if (t.shape.size() != 2) throw Error(model + ": " + table + " is not a matrix");
  const int64_t vocab = t.shape[0], D = t.shape[1];
  const uint8_t* data = file.data(table);
  const size_t esize = t.dtype == StDType::F32 ? 4 : 2;
  std::vector<float> out(ids.size() * static_cast<size_t>(D));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab)
      throw Error("token id " + std::to_string(ids[i]) + " outside the model's text vocabulary " +
                  std::to_string(vocab) + " (" + model + ")");
    const uint8_t* row = data + static_cast<size_t>(ids[i]) * static_cast<size_t>(D) * esize;
    for (int64_t d = 0; d < D; ++d)
      out[i * static_cast<size_t>(D) + static_cast<size_t>(d)] = element_f32(t.dtype, row + d * esize);
  }
  return out;
}

std::string stripped_prompt(const std::string& given) {
  const char* space = " \t\r\n\f\v";
  const size_t first = given.find_first_not_of(space);
  if (first == std::string::npos) throw Error("the prompt is empty");
  const std::string prompt = given.substr(first, given.find_last_not_of(space) - first + 1);
  if (prompt.size() > kMaxPromptBytes)
    throw Error("the prompt has " + std::to_string(prompt.size()) + " bytes, more than " +
                std::to_string(kMaxPromptBytes));
  return prompt;
}

}  // namespace vkspec
