#include "frontend/method_options_text.h"

#include "common/error.h"

namespace vkspec::frontend {

MethodOptions parse_method_options(const std::string& text) {
  MethodOptions o;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find(',', i);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(i, end - i);
    i = end + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("method option '" + item + "' is not of the form name=value (example: window=16)");
    std::string key = item.substr(0, eq);
    if (key.rfind("--", 0) == 0) key = key.substr(2);
    o[key] = item.substr(eq + 1);
  }
  return o;
}

std::string format_method_options(const MethodOptions& o) {
  std::string s;
  for (const auto& [k, v] : o) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

}  // namespace vkspec::frontend
