#pragma once
// Files in the on-disk cache directory (ContextOptions::cache_dir: pipeline caches, codebook
// neighbour tables). A cache is an optimisation, so reading never fails (a missing or unreadable
// file reads as empty) and writing reports failure instead of throwing; files are written to a
// temporary name and renamed, so a concurrent reader never sees half a file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vkspec {

std::vector<char> read_cache_file(const std::string& path);
// FNV-1a over bytes, chainable through `seed`: the key cache files are named and checked by.
uint64_t cache_hash(const void* data, size_t n, uint64_t seed = 1469598103934665603ull);
// Creates the file's directory as needed; false when anything fails.
bool write_cache_file(const std::string& path, const void* data, size_t size);
// VKSPEC_CACHE_DIR, else $XDG_CACHE_HOME/vkspec, else ~/.cache/vkspec; "" for VKSPEC_CACHE_DIR=off.
std::string cache_dir_from_environment();

}  // namespace vkspec
