#include "engine/vk/cache_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "common/env.h"

namespace vkspec {

std::vector<char> read_cache_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  return std::vector<char>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

uint64_t cache_hash(const void* data, size_t n, uint64_t h) {
  const auto* b = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

bool write_cache_file(const std::string& path, const void* data, size_t size) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos)
    for (size_t i = 1; i <= slash; ++i)
      if (i == slash || path[i] == '/') mkdir(path.substr(0, i).c_str(), 0755);
  // Unique per process and per call: two threads of one process (two Contexts on one device
  // saving the same pipeline cache) must not write into one temporary file. The last rename wins;
  // each file renamed is whole.
  static std::atomic<uint64_t> serial{0};
  const std::string tmp = path + ".tmp" + std::to_string(getpid()) + "." + std::to_string(serial.fetch_add(1));
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) return false;
    f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!f) {
      std::remove(tmp.c_str());
      return false;
    }
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

std::string cache_dir_from_environment() {
  if (const auto dir = env::text(env::kCacheDir)) return *dir == "off" ? "" : *dir;
  if (const auto xdg = env::external("XDG_CACHE_HOME")) return *xdg + "/vkspec";
  if (const auto home = env::external("HOME")) return *home + "/.cache/vkspec";
  return "";
}

}  // namespace vkspec
