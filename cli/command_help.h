#pragma once
// The text of `vkspec --help` and `vkspec <command> --help`, from the command table and the option
// tables the parsers are built from.
#include <string>

#include "cli/command_table.h"

namespace vkspec::cli {

std::string command_help(const Command& command);
std::string global_usage();

}  // namespace vkspec::cli
