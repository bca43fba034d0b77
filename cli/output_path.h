// Output files named on the command line are checked before any work starts, so a typo in a
// folder name fails in a second instead of after minutes of generation.
#pragma once

#include <string>

namespace vkspec::cli {

// Throws Error naming `flag` when the folder of `path` does not exist or is not writable.
void check_output_path(const std::string& path, const std::string& flag);

}  // namespace vkspec::cli
