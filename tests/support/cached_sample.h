#pragma once
// run_images() whose result is computed once per build and kept in the test cache directory
// (VKSPEC_CACHE_DIR, which CTest sets): CTest runs every test case in its own process, and the
// lossless cases all compare against the same 2000-image `ar` reference. The key covers what the
// images depend on: this test binary (so a code change never meets a stale reference), the model
// files, the sampler settings, the method and its options, the seeds and the count. Cases that
// CTest runs at the same time (-j) wait on a file lock for the first one to compute it instead of
// computing it again beside it; the file is renamed into place, so a reader never sees half of it.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/vk/cache_file.h"
#include "tests/support/decoding_fixture.h"

namespace vkspec::testing {

// An exclusive flock on a file for one scope. Without the lock (no file) the caller still works,
// it may just compute what another process is computing.
class ScopedFileLock {
 public:
  explicit ScopedFileLock(const std::string& path) : fd_(open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) flock(fd_, LOCK_EX);
  }
  ~ScopedFileLock() {
    if (fd_ >= 0) close(fd_);
  }
  ScopedFileLock(const ScopedFileLock&) = delete;
  ScopedFileLock& operator=(const ScopedFileLock&) = delete;

 private:
  int fd_;
};

namespace cached_sample_detail {

struct Header {
  uint64_t key;
  uint32_t images, cells;
  double ms_per_image, nfe_per_image;
};

inline uint64_t hash_file(const std::string& path, uint64_t h) {
  const std::vector<char> bytes = read_cache_file(path);
  return cache_hash(bytes.data(), bytes.size(), h);
}

inline bool read(const std::string& path, uint64_t key, int images, Sample& s) {
  const std::vector<char> data = read_cache_file(path);
  Header h;
  if (data.size() < sizeof h) return false;
  std::memcpy(&h, data.data(), sizeof h);
  if (h.key != key || h.images != static_cast<uint32_t>(images) ||
      data.size() != sizeof h + static_cast<size_t>(h.images) * h.cells * sizeof(int32_t))
    return false;
  s.grids.assign(h.images, std::vector<int32_t>(h.cells));
  for (uint32_t i = 0; i < h.images; ++i)
    std::memcpy(s.grids[i].data(), data.data() + sizeof h + static_cast<size_t>(i) * h.cells * sizeof(int32_t),
                h.cells * sizeof(int32_t));
  s.ms_per_image = h.ms_per_image;
  s.nfe_per_image = h.nfe_per_image;
  return true;
}

inline void write(const std::string& path, uint64_t key, const Sample& s) {
  const uint32_t cells = s.grids.empty() ? 0u : static_cast<uint32_t>(s.grids[0].size());
  const Header h{key, static_cast<uint32_t>(s.grids.size()), cells, s.ms_per_image, s.nfe_per_image};
  std::vector<char> data(sizeof h);
  std::memcpy(data.data(), &h, sizeof h);
  for (const auto& g : s.grids) {
    const char* b = reinterpret_cast<const char*>(g.data());
    data.insert(data.end(), b, b + g.size() * sizeof(int32_t));
  }
  write_cache_file(path, data.data(), data.size());
}

}  // namespace cached_sample_detail

// The tiny models' images for `method`, as run_images(ctx, by_name(method, sampler), options,
// first_seed, images) gives them (events are not kept). With caching off (VKSPEC_CACHE_DIR=off) it
// just runs.
// Another model set than the tiny class-conditional one (as run_images takes it): `files` are its
// model files, which the key covers instead of the tiny models'.
struct OtherModels {
  const ModelSet* set = nullptr;
  ConditionFor condition_for;
  std::vector<std::string> files;
};

inline Sample cached_run_images(Context& ctx, const std::string& method, const MethodOptions& options,
                                uint64_t first_seed, int images, const SamplerSettings& sampler = tiny_settings(),
                                const OtherModels& other = {}) {
  const std::string& dir = ctx.options().cache_dir;
  auto compute = [&] {
    return run_images(ctx, by_name(method, sampler), options, first_seed, images, false, other.set,
                      other.condition_for);
  };
  if (dir.empty()) return compute();
  namespace d = cached_sample_detail;
  std::string what =
      method + " " + sampler.str() + " seeds " + std::to_string(first_seed) + "+" + std::to_string(images);
  for (const auto& [k, v] : options) what += " " + k + "=" + v;
  uint64_t key = cache_hash(what.data(), what.size());
  key = d::hash_file("/proc/self/exe", key);
  if (other.set) {
    for (const std::string& file : other.files) key = d::hash_file(file, key);
  } else {
    const TinyModels& models = tiny_models(ctx);
    for (const char* file : kTinyModelFiles) key = d::hash_file(models.dir + "/" + file, key);
  }

  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(key));
  mkdir(dir.c_str(), 0755);
  const std::string path = dir + "/test-sample-" + method + "-" + hex + ".bin";
  ScopedFileLock lock(path + ".lock");
  Sample s;
  if (d::read(path, key, images, s)) return s;
  s = compute();
  d::write(path, key, s);
  return s;
}

}  // namespace vkspec::testing
