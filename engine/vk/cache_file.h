#pragma once
// Files in the on-disk cache directory (ContextOptions::cache_dir: pipeline caches, codebook
// neighbour tables). A cache is an optimisation, so reading never fails (a missing or unreadable
// file reads as empty) and writing reports failure instead of throwing; files are written to a
// temporary name and renamed, so a concurrent reader never sees half a file.
#include <cstddef>
#include <string>
#include <vector>

namespace vkspec {

std::vector<char> read_cache_file(const std::string& path);
// Creates the file's directory as needed; false when anything fails.
bool write_cache_file(const std::string& path, const void* data, size_t size);

}  // namespace vkspec
