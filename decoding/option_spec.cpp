#include "decoding/option_spec.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/error.h"

namespace vkspec {
namespace {

std::string short_number(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%g", v);
  return b;
}

std::string joined(const std::vector<std::string>& items, const std::string& sep, const std::string& prefix = "") {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + prefix + i;
  return s;
}

// Parses `text` as the spec's type and checks it; returns the error message, "" when valid.
std::string problem(const std::string& method, const OptionSpec& o, const std::string& text) {
  const std::string flag = method + ": --" + o.name;
  if (o.type == OptionSpec::Type::Choice) {
    if (std::find(o.choices.begin(), o.choices.end(), text) == o.choices.end())
      return flag + " must be one of " + joined(o.choices, ", ") + ", got '" + text + "'";
    return "";
  }
  char* end = nullptr;
  errno = 0;
  if (o.type == OptionSpec::Type::Integer) {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end || errno == ERANGE) return flag + " expects an integer, got '" + text + "'";
    if (v < static_cast<long long>(o.lo) || v > static_cast<long long>(o.hi))
      return flag + " must be in [" + std::to_string(static_cast<long long>(o.lo)) + ", " +
             std::to_string(static_cast<long long>(o.hi)) + "], got " + text;
    return "";
  }
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !std::isfinite(v)) return flag + " expects a finite number, got '" + text + "'";
  if (v < o.lo || v > o.hi)
    return flag + " must be in [" + short_number(o.lo) + ", " + short_number(o.hi) + "], got " + text;
  return "";
}

}  // namespace

OptionSpec OptionSpec::integer(std::string name, int64_t fallback, int64_t lo, int64_t hi, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = Type::Integer;
  s.fallback = std::to_string(fallback);
  s.lo = static_cast<double>(lo);
  s.hi = static_cast<double>(hi);
  s.help = std::move(help);
  return s;
}

OptionSpec OptionSpec::number(std::string name, double fallback, double lo, double hi, std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = Type::Number;
  s.fallback = short_number(fallback);
  s.lo = lo;
  s.hi = hi;
  s.help = std::move(help);
  return s;
}

OptionSpec OptionSpec::choice(std::string name, std::string fallback, std::vector<std::string> choices,
                              std::string help) {
  OptionSpec s;
  s.name = std::move(name);
  s.type = Type::Choice;
  s.fallback = std::move(fallback);
  s.choices = std::move(choices);
  s.help = std::move(help);
  return s;
}

std::string OptionSpec::accepted() const {
  switch (type) {
    case Type::Integer:
      return "integer in [" + std::to_string(static_cast<long long>(lo)) + ", " +
             std::to_string(static_cast<long long>(hi)) + "]";
    case Type::Number: return "number in [" + short_number(lo) + ", " + short_number(hi) + "]";
    case Type::Choice: return joined(choices, " | ");
  }
  return "";
}

OptionValues::OptionValues(std::string method, const std::vector<OptionSpec>& specs, const MethodOptions& given,
                           Leniency leniency)
    : method_(std::move(method)), specs_(specs) {
  std::vector<std::string> names;
  for (const OptionSpec& s : specs_) names.push_back(s.name);
  for (const auto& [k, v] : given) {
    auto it = std::find_if(specs_.begin(), specs_.end(), [&](const OptionSpec& s) { return s.name == k; });
    if (it == specs_.end()) {
      if (leniency == Leniency::DefaultsForBadValues) continue;
      throw Error("method " + method_ + " has no option --" + k +
                  (names.empty() ? "" : " (options: " + joined(names, ", ", "--") + ")"));
    }
    const std::string bad = problem(method_, *it, v);
    if (bad.empty()) {
      given_[k] = v;
    } else if (leniency == Leniency::Strict) {
      throw Error(bad);
    }
  }
}

const OptionSpec& OptionValues::spec(const std::string& key) const {
  for (const OptionSpec& s : specs_)
    if (s.name == key) return s;
  throw Error(method_ + ": no option spec for --" + key + " (a strategy reads an option it did not declare)");
}

bool OptionValues::declares(const std::string& key) const {
  return std::any_of(specs_.begin(), specs_.end(), [&](const OptionSpec& s) { return s.name == key; });
}

const std::string& OptionValues::text(const std::string& key) const {
  const OptionSpec& s = spec(key);
  auto it = given_.find(key);
  return it == given_.end() ? s.fallback : it->second;
}

int64_t OptionValues::integer(const std::string& key) const { return std::strtoll(text(key).c_str(), nullptr, 10); }

double OptionValues::number(const std::string& key) const { return std::strtod(text(key).c_str(), nullptr); }

const std::string& OptionValues::choice(const std::string& key) const { return text(key); }

int64_t OptionValues::integer_at_most(const std::string& key, int64_t hi, int64_t fallback) const {
  if (!given(key)) return fallback;
  const int64_t v = integer(key);
  const int64_t lo = static_cast<int64_t>(spec(key).lo);
  if (v > hi)
    throw Error(method_ + ": --" + key + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                given_.at(key));
  return v;
}

}  // namespace vkspec
