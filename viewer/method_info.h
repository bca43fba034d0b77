#pragma once
// One-line descriptions of decoding methods for the kiosk captions and the method panel. Methods
// without an entry (new strategies) get a generic line, so every registered method still shows.
#include <string>

namespace vkspec::viewer {

std::string method_summary(const std::string& method);

}  // namespace vkspec::viewer
