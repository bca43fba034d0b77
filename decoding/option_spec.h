#pragma once
// A method's options as data: each option's name, type, default, range or choices and help text
// (OptionSpec), and the values given for one run parsed and checked against them (OptionValues).
// The CLI's option routing and --help, bench, the viewer and docs/methods.md's option tables read
// the specs from the strategy registry (strategy_registry.h); strategies read OptionValues.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace vkspec {

// Method options as given on the command line (--window 16 -> {"window", "16"}).
using MethodOptions = std::map<std::string, std::string>;

struct OptionSpec {
  enum class Type { Integer, Number, Choice };
  std::string name;  // without the leading --
  Type type = Type::Integer;
  std::string fallback;   // the default as text; a default that depends on the model says so in `help`
  double lo = 0, hi = 0;  // Integer and Number: the accepted range
  std::vector<std::string> choices;
  std::string help;

  static OptionSpec integer(std::string name, int64_t fallback, int64_t lo, int64_t hi, std::string help);
  static OptionSpec number(std::string name, double fallback, double lo, double hi, std::string help);
  static OptionSpec choice(std::string name, std::string fallback, std::vector<std::string> choices, std::string help);
  // "integer in [1, 1024]", "one of exact, lantern", ...: for --help and the docs.
  std::string accepted() const;
};

// The options of one run of `method`, checked against its specs when constructed: an option the
// method does not know, a malformed value, one out of range or not among the choices throws Error
// naming the method and the option. Lenient construction (Leniency::DefaultsForBadValues) instead
// reads a bad value as the default: what front ends use to size models before the strategy itself
// reports the error.
class OptionValues {
 public:
  enum class Leniency { Strict, DefaultsForBadValues };
  OptionValues(std::string method, const std::vector<OptionSpec>& specs, const MethodOptions& given,
               Leniency leniency = Leniency::Strict);

  const std::string& method() const { return method_; }
  bool given(const std::string& key) const { return given_.count(key) > 0; }
  // Whether the method has the option at all.
  bool declares(const std::string& key) const;
  // The value given, else the spec's default; throws for a key without a spec.
  int64_t integer(const std::string& key) const;
  double number(const std::string& key) const;
  const std::string& choice(const std::string& key) const;
  // An integer option whose upper bound depends on the model (a grid width): the given value
  // checked against hi, else `fallback`.
  int64_t integer_at_most(const std::string& key, int64_t hi, int64_t fallback) const;
  // The options as given (validated), for copying into another method's inputs.
  const MethodOptions& given_options() const { return given_; }

 private:
  const OptionSpec& spec(const std::string& key) const;
  const std::string& text(const std::string& key) const;

  std::string method_;
  std::vector<OptionSpec> specs_;
  MethodOptions given_;
};

}  // namespace vkspec
