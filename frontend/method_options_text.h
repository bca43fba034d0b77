#pragma once
// Method options as one line of text, "window=16,init=above": what the viewer's --options and its
// panel take, and what sample files record.
#include <string>

#include "decoding/strategy.h"

namespace vkspec::frontend {

// Throws Error naming an item that is not name=value; a leading "--" on a name is dropped.
MethodOptions parse_method_options(const std::string& text);
// The inverse, keys in order.
std::string format_method_options(const MethodOptions& options);

}  // namespace vkspec::frontend
