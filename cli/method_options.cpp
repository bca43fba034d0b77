#include "cli/method_options.h"

#include <algorithm>
#include <map>

#include "common/error.h"

namespace vkspec::cli {

namespace {

// What a value looks like; the accepted range or choices differ between methods, so only the kind.
std::string value_name(const OptionSpec& o) {
  if (o.type == OptionSpec::Type::Integer) return "N";
  if (o.type == OptionSpec::Type::Number) return "X";
  std::string v;
  for (const std::string& c : o.choices) v += (v.empty() ? "" : "|") + c;
  return v;
}

}  // namespace

frontend::OptionTable method_option_table() {
  // By name, so that help lists them alphabetically (the registry orders by method).
  std::map<std::string, std::pair<const OptionSpec*, std::string>> by_name;
  for (const StrategyDescriptor* d : strategy_registry())
    for (const OptionSpec& o : d->options) {
      auto& [spec, users] = by_name[o.name];
      if (!spec) spec = &o;
      users += (users.empty() ? "" : ", ") + d->name;
    }
  frontend::OptionTable t;
  for (const auto& [name, entry] : by_name)
    t.push_back({"--" + name, value_name(*entry.first), "(" + entry.second + ") " + entry.first->help});
  return t;
}

std::vector<std::string> method_option_flags() { return frontend::option_names(method_option_table()); }

MethodOptions given_method_options(const frontend::ArgParser& ap) {
  MethodOptions o;
  for (const std::string& flag : method_option_flags())
    if (auto v = ap.get(flag)) o[flag.substr(2)] = *v;
  // --drafter names a model file for the CLI; a method only learns whether a model drafts (the
  // EAGLE drafter's file is --eagle-drafter).
  if (auto it = o.find("drafter"); it != o.end() && it->second != "jacobi" && it->second != "eagle")
    it->second = "model";
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
