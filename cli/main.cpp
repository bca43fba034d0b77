// vkspec: autoregressive image generation with speculative decoding on any Vulkan device.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "cli/command_help.h"
#include "cli/command_table.h"

namespace {

bool asks_for_help(const std::string& a) { return a == "--help" || a == "-h" || a == "help"; }

}  // namespace

int main(int argc, char** argv) {
  using namespace vkspec::cli;
  if (argc < 2 || asks_for_help(argv[1])) {
    std::fputs(global_usage().c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::string(argv[1]) == "--version") {
    std::printf("vkspec %s\n", VKSPEC_VERSION);
    return 0;
  }
  const Command* command = find_command(argv[1]);
  if (!command) {
    std::cerr << "vkspec: unknown command '" << argv[1] << "'\n\n" << global_usage();
    return 2;
  }
  const Args args(argv + 2, argv + argc);
  // Before parsing, so that help never depends on the other options being right.
  for (const std::string& a : args)
    if (a == "--help" || a == "-h") {
      std::fputs(command_help(*command).c_str(), stdout);
      return 0;
    }
  try {
    return command->run(args);
  } catch (const std::exception& e) {
    std::cerr << "vkspec " << argv[1] << ": error: " << e.what() << "\n";
    return 1;
  }
}
