#include "cli/model_paths.h"

#include <cstdlib>
#include <sys/stat.h>

#include "common/error.h"

namespace vkspec::cli {

std::string asset_dir() {
  if (const char* a = std::getenv("VKSPEC_ASSETS"); a && *a) return a;
  return VKSPEC_DEFAULT_ASSETS;
}

std::string shipped_model(const std::string& name, const std::string& option) {
  const std::string path = asset_dir() + "/" + name;
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    throw Error("shipped model " + path + " not found (set VKSPEC_ASSETS, or pass " + option + " FILE)");
  return path;
}

}  // namespace vkspec::cli
