#include "frontend/arg_parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/error.h"

namespace vkspec::frontend {

void append_options(OptionTable& table, const OptionTable& more) {
  for (const OptionDoc& o : more) {
    bool named = false;
    for (const OptionDoc& t : table) named = named || t.name == o.name;
    if (!named) table.push_back(o);
  }
}

std::vector<std::string> option_names(const OptionTable& table) {
  std::vector<std::string> names;
  for (const OptionDoc& o : table) names.push_back(o.name);
  return names;
}

ArgParser::ArgParser(const std::string& command, std::set<std::string> flags, std::set<std::string> options)
    : command_(command), flags_(std::move(flags)), options_(std::move(options)) {}

ArgParser::ArgParser(const std::string& command, const OptionTable& table) : command_(command) {
  for (const OptionDoc& o : table) (o.value.empty() ? flags_ : options_).insert(o.name);
}

void ArgParser::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    std::string value;
    bool has_inline = false;
    if (a.rfind("--", 0) == 0) {
      const size_t eq = a.find('=');
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_inline = true;
      }
    }
    if (flags_.count(a)) {
      if (has_inline) throw Error(command_ + ": option " + a + " takes no value");
      flags_set_.insert(a);
    } else if (options_.count(a)) {
      if (!has_inline) {
        if (i + 1 >= args.size()) throw Error(command_ + ": option " + a + " needs a value");
        value = args[++i];
      }
      values_[a] = value;
    } else {
      throw Error(command_ + ": unknown option '" + args[i] + "' (--help lists the options)");
    }
  }
}

std::optional<std::string> ArgParser::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string ArgParser::get_or(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

long long ArgParser::get_int(const std::string& name, long long fallback, long long lo, long long hi) const {
  auto v = get(name);
  if (!v) return fallback;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0' || errno == ERANGE)
    throw Error(command_ + ": " + name + " expects an integer, got '" + *v + "'");
  if (x < lo || x > hi)
    throw Error(command_ + ": " + name + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                *v);
  return x;
}

double ArgParser::get_double(const std::string& name, double fallback, double lo, double hi) const {
  auto v = get(name);
  if (!v) return fallback;
  char* end = nullptr;
  const double x = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0' || !std::isfinite(x))
    throw Error(command_ + ": " + name + " expects a finite number, got '" + *v + "'");
  if (x < lo || x > hi)
    throw Error(command_ + ": " + name + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                *v);
  return x;
}

}  // namespace vkspec::frontend
