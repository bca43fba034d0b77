#include "viewer/method_info.h"

#include "common/error.h"
#include "decoding/strategy_registry.h"

namespace vkspec::viewer {

std::string method_summary(const std::string& method) {
  try {
    return find_strategy(method).summary;
  } catch (const Error&) {
    return "decoding method '" + method + "'";  // a trace of a method this build does not have
  }
}

}  // namespace vkspec::viewer
