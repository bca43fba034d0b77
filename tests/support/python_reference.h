#pragma once
// Runs tools/reference.py (PyTorch) for parity tests. When PyTorch is missing the caller skips
// with the message returned here.
#include <string>
#include <vector>

namespace vkspec::testing {

struct ReferenceRun {
  bool ok = false;
  bool skipped = false;  // PyTorch absent (exit 77)
  std::string message;
};

// Ids as the reference's --ids and --tokens options take them: "5,9,3".
std::string comma_list(const std::vector<int32_t>& ids);

// args are passed to `python3 tools/reference.py`; paths are used as given.
ReferenceRun run_reference(const std::vector<std::string>& args);
// The same for another script in tools/ (e.g. "convert_llamagen.py").
ReferenceRun run_tool(const std::string& script, const std::vector<std::string>& args);

// A fresh directory under the build tree for one test's files.
std::string scratch_dir(const std::string& test_name);

}  // namespace vkspec::testing
