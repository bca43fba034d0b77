#include "cli/command_help.h"

#include <sstream>

#include "common/env.h"

namespace vkspec::cli {
namespace {

constexpr size_t kWidth = 100, kHelpColumn = 30, kSummaryColumn = 14;

// `text` broken at spaces into lines of at most kWidth columns, each but the first indented.
std::string wrapped(const std::string& text, size_t first_column, size_t indent) {
  std::istringstream words(text);
  std::string out, word;
  size_t column = first_column;
  for (bool first = true; words >> word; first = false) {
    if (!first && column + 1 + word.size() > kWidth) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (!first) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  return out + "\n";
}

std::string option_lines(const frontend::OptionTable& table) {
  std::string out;
  for (const frontend::OptionDoc& o : table) {
    std::string head = "  " + o.name + (o.value.empty() ? "" : " " + o.value);
    // A long name gets its help on the next line rather than pushing the column.
    head += head.size() + 2 > kHelpColumn ? "\n" + std::string(kHelpColumn, ' ')
                                          : std::string(kHelpColumn - head.size(), ' ');
    out += head + wrapped(o.help, kHelpColumn, kHelpColumn);
  }
  return out;
}

}  // namespace

std::string command_help(const Command& command) {
  std::string out = "usage: " + command.usage + "\n\n" + wrapped(command.summary, 0, 0);
  for (const OptionSection& s : command.sections()) {
    out += "\n" + (s.title.empty() ? std::string("options") : s.title) + ":\n";
    if (!s.usage.empty()) out += "  usage: " + s.usage + "\n";
    out += option_lines(s.options);
  }
  return out;
}

std::string global_usage() {
  std::string out = "usage: vkspec <command> [options]\n"
                    "       vkspec <command> --help   the command's options\n"
                    "       vkspec --version\n\ncommands:\n";
  for (const Command& c : command_table()) {
    const std::string head = "  " + c.name;
    out += head + std::string(kSummaryColumn > head.size() + 1 ? kSummaryColumn - head.size() : 1, ' ') +
           wrapped(c.summary, kSummaryColumn, kSummaryColumn);
  }
  out += "\n" + methods_usage() + "\nenvironment:\n";
  // The variables' own table (common/env.h), as docs/usage.md shows it.
  for (const env::Variable* v : env::variables()) out += std::string("  ") + v->setting + "\n      " + v->effect + "\n";
  return out;
}

}  // namespace vkspec::cli
