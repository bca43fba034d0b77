#pragma once
// Writes NumPy .npz files (np.load reads them): a zip archive of .npy entries (format 1.0, C order),
// stored uncompressed and streamed, so an array larger than memory (50000 images of 256x256) can
// be written an image at a time. What the ADM evaluation suite (guided-diffusion's evaluations/)
// and LlamaGen's FID scripts read.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace vkspec {

enum class NpyType { U8, I32 };

class NpzWriter {
 public:
  // Throws Error naming the path when the file cannot be created.
  explicit NpzWriter(std::string path);
  NpzWriter(const NpzWriter&) = delete;
  NpzWriter& operator=(const NpzWriter&) = delete;
  // A file never closed is incomplete: it is removed rather than left to be mistaken for a result.
  ~NpzWriter();

  // Starts entry `name`.npy; its bytes (C order, little-endian) follow through write() and must
  // fill `shape` exactly before end_array().
  void begin_array(const std::string& name, NpyType type, const std::vector<int64_t>& shape);
  void write(const void* data, size_t bytes);
  void end_array();
  // A whole array at once.
  void add_array(const std::string& name, NpyType type, const std::vector<int64_t>& shape, const void* data);
  // The central directory; throws Error when anything failed to reach the disk.
  void close();

 private:
  struct Entry {
    std::string name;
    uint64_t offset = 0, size = 0;  // of the local header; of the stored .npy
    uint32_t crc = 0;
  };
  void put(const void* data, size_t bytes);
  void check_stream(const char* what);

  std::string path_;
  std::ofstream out_;
  std::vector<Entry> entries_;
  bool open_entry_ = false, closed_ = false;
  uint64_t written_ = 0;  // bytes of the open entry so far
};

}  // namespace vkspec
