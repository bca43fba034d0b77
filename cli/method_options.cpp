#include "cli/method_options.h"

#include <algorithm>
#include <set>

#include "common/error.h"

namespace vkspec::cli {

std::vector<std::string> method_option_flags() {
  std::set<std::string> keys;
  for (const StrategyDescriptor* d : strategy_registry())
    for (const OptionSpec& o : d->options) keys.insert("--" + o.name);
  return {keys.begin(), keys.end()};
}

MethodOptions given_method_options(const frontend::ArgParser& ap) {
  MethodOptions o;
  for (const std::string& flag : method_option_flags())
    if (auto v = ap.get(flag)) o[flag.substr(2)] = *v;
  // --drafter names a model file for the CLI; a method only learns whether a model drafts.
  if (auto it = o.find("drafter"); it != o.end() && it->second != "jacobi") it->second = "model";
  return o;
}

MethodOptions options_for(const std::string& method, const MethodOptions& given) {
  const StrategyDescriptor& d = find_strategy(method);
  MethodOptions o;
  for (const auto& [k, v] : given)
    if (d.has_option(k)) o[k] = v;
  return o;
}

void check_used(const MethodOptions& given, const std::vector<std::string>& methods) {
  for (const auto& [k, v] : given) {
    bool used = false;
    for (const std::string& m : methods)
      used = used || !options_for(m, {{k, v}}).empty() || (k == "drafter" && find_strategy(m).needs_for({}).drafter);
    if (!used) {
      std::string list;
      for (const std::string& m : methods) list += (list.empty() ? "" : ", ") + m;
      throw Error("option --" + k + " is not used by any of the methods (" + list + ")");
    }
  }
}

}  // namespace vkspec::cli
