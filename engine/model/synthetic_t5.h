#pragma once
// T5 encoder files with generated weights, in memory, in tools/convert_t5.py's layout: flan-t5-xl
// (LlamaGen's text encoder), t5-v1_1-xl and -xxl for `vkspec bench-text-encoder --synthetic`,
// and "t5-tiny"; they load through the same reader as a converted one.
#include <string>
#include <vector>

#include "engine/model/synthetic_gpt.h"

namespace vkspec {

// The shapes' names, in listing order.
const std::vector<std::string>& synthetic_t5_shapes();
// The file of shape `name` (LlamaGen-like values, norms 1); throws Error for an unknown name.
SafetensorsWriter synthetic_t5(const std::string& name, uint64_t seed);

}  // namespace vkspec
