#pragma once
// Small text helpers every layer may use.
#include <string>
#include <vector>

namespace vkspec {

// The non-empty items of s between separators: "a,,b," -> {"a", "b"}.
std::vector<std::string> split(const std::string& s, char sep);

}  // namespace vkspec
