// Output files named on the command line are checked before any work starts, so a typo in a
// folder name fails in a second instead of after minutes of generation.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace vkspec::cli {

// Throws Error naming `flag` when the folder of `path` does not exist or is not writable.
void check_output_path(const std::string& path, const std::string& flag);
// A folder to write files into: created when missing (its parent must exist, as for a file);
// throws Error naming `flag` when it cannot be made or written to, or is a file.
void make_output_dir(const std::string& dir, const std::string& flag);

// Writes `j` (2-space indented) to `path`; throws Error naming `command` and the path when the
// file cannot be opened or the write fails.
void write_json_file(const std::string& path, const nlohmann::json& j, const std::string& command);

}  // namespace vkspec::cli
