#pragma once
// Every `vkspec` subcommand with what its help says: main.cpp dispatches through this table and
// prints the usage and each command's --help from it.
#include <string>
#include <vector>

#include "cli/commands.h"

namespace vkspec::cli {

struct Command {
  std::string name;
  std::string usage;    // "vkspec generate [options]"
  std::string summary;  // one paragraph, what it does
  int (*run)(const Args&);
  std::vector<OptionSection> (*sections)();
};

const std::vector<Command>& command_table();
// nullptr when no command has this name.
const Command* find_command(const std::string& name);

}  // namespace vkspec::cli
