#include "cli/output_path.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"

namespace vkspec::cli {

void check_output_path(const std::string& path, const std::string& flag) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(flag + " " + path + ": folder " + dir.string() + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(flag + " " + path + ": folder " + dir.string() + " is not writable");
  if (fs::is_directory(path, ec)) throw Error(flag + " " + path + " is a folder, not a file name");
}

void make_output_dir(const std::string& given, const std::string& flag) {
  namespace fs = std::filesystem;
  std::string dir = given;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();  // "out/": the parent is ".", not "out"
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw Error(flag + " " + dir + " is a file, not a folder");
  if (!fs::is_directory(dir, ec)) {
    check_output_path(dir, flag);
    if (!fs::create_directory(dir, ec))
      throw Error(flag + " " + dir + ": cannot create the folder (" + ec.message() + ")");
  }
  if (::access(dir.c_str(), W_OK) != 0) throw Error(flag + " " + dir + " is not writable");
}

void write_json_file(const std::string& path, const nlohmann::json& j, const std::string& command) {
  std::ofstream f(path);
  if (!f) throw Error(command + ": cannot write " + path);
  f << j.dump(2) << "\n";
  if (!f.flush()) throw Error(command + ": writing " + path + " failed");
}

}  // namespace vkspec::cli
