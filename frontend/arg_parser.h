#pragma once
// Small option parser shared by the subcommands: --name value, --flag; anything unknown or
// malformed is an error naming the option.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace vkspec::frontend {

// One option of a command as its --help shows it. A command builds its parser from its table, so
// the help and the accepted options cannot drift apart.
struct OptionDoc {
  std::string name;   // "--seed"
  std::string value;  // what the value looks like ("S", "FILE"); empty: a flag without a value
  std::string help;
};
using OptionTable = std::vector<OptionDoc>;

// `more`'s options that `table` does not name yet, appended (the first description of a name wins).
void append_options(OptionTable& table, const OptionTable& more);
// The names of a table's options.
std::vector<std::string> option_names(const OptionTable& table);

class ArgParser {
 public:
  // flags: options without a value; options: options with one value.
  ArgParser(const std::string& command, std::set<std::string> flags, std::set<std::string> options);
  ArgParser(const std::string& command, const OptionTable& table);
  void parse(const std::vector<std::string>& args);  // throws Error on bad input

  bool flag(const std::string& name) const { return flags_set_.count(name) != 0; }
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  // Integer option within [lo, hi]; throws naming the option when malformed or out of range.
  long long get_int(const std::string& name, long long fallback, long long lo, long long hi) const;
  double get_double(const std::string& name, double fallback, double lo, double hi) const;

 private:
  std::string command_;
  std::set<std::string> flags_, options_, flags_set_;
  std::map<std::string, std::string> values_;
};

}  // namespace vkspec::frontend
