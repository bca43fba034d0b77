#pragma once
// What the prompt-taking families (Janus-Pro, Lumina-mGPT) share: rows of a model's text
// embedding table read on the host from its file (the table, 65536 or 102400 x 4096 for a 7B,
// never goes to the device: a prompt needs a few dozen rows once), and the user's prompt as the
// released processors clean it.
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
