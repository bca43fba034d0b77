#include "engine/vk/mesa_shader_cache.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "common/env.h"

namespace vkspec {

std::string keep_forced_width_shader_cache_apart(const std::string& cache_dir) {
  const auto width = env::external("LP_NATIVE_VECTOR_WIDTH");
  if (!width || env::external("MESA_SHADER_CACHE_DIR")) return "";
  if (cache_dir.empty()) {
    setenv("MESA_SHADER_CACHE_DISABLE", "true", 0);
    return "";
  }
  const std::string dir = cache_dir + "/mesa-shader-cache/width-" + *width;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  // A folder that cannot be made leaves Mesa nothing to share across widths either way: no cache.
  if (ec) {
    setenv("MESA_SHADER_CACHE_DISABLE", "true", 0);
    return "";
  }
  setenv("MESA_SHADER_CACHE_DIR", dir.c_str(), 1);
  return dir;
}

}  // namespace vkspec
