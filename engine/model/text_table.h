#pragma once
// What the prompt-taking models share (Janus-Pro's and Lumina-mGPT's prompts, the T5 encoder's
// input): rows of a text embedding table read on the host from the model file (the table, 32128
// to 102400 rows of up to 4096, never goes to the device: a prompt needs a few dozen rows once),
// and the user's prompt as the released processors clean it.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/safetensors.h"

namespace vkspec {

// Rows `ids` of tensor `table` ([text_vocab, dim], any float dtype) as f32 [ids, dim]; throws
// Error naming `model` for an id outside the table.
std::vector<float> text_table_rows(const SafetensorsFile& file, const std::string& table,
                                   const std::vector<int32_t>& ids, const std::string& model);

// The prompt stripped of ASCII whitespace at both ends (Python's str.strip); throws Error for an
// empty one or one longer than 64 KiB.
std::string stripped_prompt(const std::string& prompt);

}  // namespace vkspec
