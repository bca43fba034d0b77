#include "tests/support/python_reference.h"

#include <cstdlib>
#include <sys/stat.h>
#include <sys/wait.h>

namespace vkspec::testing {
namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

ReferenceRun run_reference(const std::vector<std::string>& args) { return run_tool("reference.py", args); }

ReferenceRun run_tool(const std::string& script, const std::vector<std::string>& args) {
  std::string cmd = std::string("OMP_NUM_THREADS=1 ") + VKSPEC_PYTHON + " " + VKSPEC_SOURCE_DIR "/tools/" + script;
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " 2>&1";
  ReferenceRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    r.message = "could not start " + cmd;
    return r;
  }
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) r.message += buf;
  const int status = pclose(p);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.ok = code == 0;
  r.skipped = code == 77;
  if (!r.ok && !r.skipped) r.message = cmd + " failed (exit " + std::to_string(code) + "): " + r.message;
  return r;
}

std::string comma_list(const std::vector<int32_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s;
}

std::string scratch_dir(const std::string& test_name) {
  const std::string root = std::string(VKSPEC_BINARY_DIR) + "/test-scratch";
  mkdir(root.c_str(), 0755);
  const std::string dir = root + "/" + test_name;
  mkdir(dir.c_str(), 0755);
  return dir;
}

}  // namespace vkspec::testing
