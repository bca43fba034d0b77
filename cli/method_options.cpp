#include "cli/method_options.h"

#include <algorithm>
#include <set>

#include "common/error.h"

namespace vkspec::cli {

std::vector<std::string> method_option_flags() {
  std::set<std::string> keys;
  for (const std::string& m : strategy_names())
    for (const std::string& k : strategy_options(m)) keys.insert("--" + k);
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
  const std::vector<std::string> known = strategy_options(method);
  MethodOptions o;
  for (const auto& [k, v] : given)
    if (std::find(known.begin(), known.end(), k) != known.end()) o[k] = v;
  return o;
}

void check_used(const MethodOptions& given, const std::vector<std::string>& methods) {
  for (const auto& [k, v] : given) {
    bool used = false;
    for (const std::string& m : methods)
      used = used || !options_for(m, {{k, v}}).empty() || (k == "drafter" && strategy_needs(m).drafter);
    if (!used) {
      std::string list;
      for (const std::string& m : methods) list += (list.empty() ? "" : ", ") + m;
      throw Error("option --" + k + " is not used by any of the methods (" + list + ")");
    }
  }
}

std::string options_str(const MethodOptions& o) {
  std::string s;
  for (const auto& [k, v] : o) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

}  // namespace vkspec::cli
