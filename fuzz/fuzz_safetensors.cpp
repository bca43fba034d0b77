// Fuzz target: the safetensors reader on arbitrary bytes (an in-memory file opened by path, the
// way a model file is), then every accessor a loader uses.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "engine/model/safetensors.h"
#include "common/error.h"
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const int fd = memfd_create("fuzz.safetensors", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    const ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  try {
    vkspec::SafetensorsFile f("/proc/self/fd/" + std::to_string(fd));
    for (const std::string& name : f.tensor_names()) {
      const vkspec::StTensorInfo& info = f.info(name);
      (void)f.data(name);
      if (info.bytes() <= (1u << 20)) {
        try {
          (void)f.read_f32(name);
        } catch (const vkspec::Error&) {
        }
      }
    }
    for (const auto& [key, value] : f.metadata()) {
      try {
        (void)f.meta_int(key);
      } catch (const vkspec::Error&) {
      }
      try {
        (void)f.meta_float(key);
      } catch (const vkspec::Error&) {
      }
      try {
        (void)f.meta_int_list(key);
      } catch (const vkspec::Error&) {
      }
    }
  } catch (const vkspec::Error&) {
  }
  close(fd);
  return 0;
}
