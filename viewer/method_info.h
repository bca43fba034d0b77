#pragma once
// One-line descriptions of decoding methods for the kiosk captions and the method panel, from
// the strategy registry; a method this build does not know (an old trace) gets a generic line.
#include <string>

namespace vkspec::viewer {

std::string method_summary(const std::string& method);

}  // namespace vkspec::viewer
