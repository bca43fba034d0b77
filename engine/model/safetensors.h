#pragma once
// Read-only safetensors files: u64 little-endian header length N, N bytes of JSON, raw tensor
// bytes. The file is memory-mapped and every header field is validated against the file before
// anything is handed out, so a truncated or hand-edited checkpoint fails at open with a message
// naming the file and the tensor, never later as garbage weights. The same bytes can also come
// from memory (SafetensorsWriter::take_bytes), so generated models load through the same code.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace vkspec {

// Element types a file may hold. Weights are F32/F16/BF16; the integer types carry non-weight
// data (token traces, index tables). Any other safetensors dtype is rejected at open.
enum class StDType : uint8_t { F32, F16, BF16, I32, I64, U8 };

size_t st_dtype_size(StDType t);
const char* st_dtype_name(StDType t);  // the safetensors spelling: "F32", "BF16", ...
// Parses the safetensors spelling; false for dtypes this reader does not accept.
bool st_dtype_parse(const std::string& s, StDType* out);

struct StTensorInfo {
  std::string name;
  StDType dtype = StDType::F32;
  std::vector<int64_t> shape;  // any rank; [] is a scalar
  int64_t numel = 1;
  uint64_t begin = 0, end = 0;  // byte range [begin, end) relative to the data section

  uint64_t bytes() const { return end - begin; }
  std::string shape_str() const;  // "[2304, 768]"
};

class SafetensorsFile {
 public:
  // Maps and validates the whole header; throws vkspec::Error naming path (and the tensor).
  explicit SafetensorsFile(const std::string& path);
  // The same validation over bytes held in memory; `name` stands in for the path in messages.
  SafetensorsFile(const std::string& name, std::vector<uint8_t> bytes);
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&& o) noexcept;
  SafetensorsFile& operator=(SafetensorsFile&& o) noexcept;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t file_size() const { return size_; }

  // Names in file (data offset) order.
  const std::vector<std::string>& tensor_names() const { return names_; }
  bool has(const std::string& name) const { return tensors_.count(name) != 0; }
  const StTensorInfo& info(const std::string& name) const;  // throws when missing
  // Raw little-endian bytes of a tensor (info(name).bytes() of them). Not necessarily aligned to
  // the element size: read through memcpy.
  const uint8_t* data(const std::string& name) const;
  // F32/F16/BF16 tensor converted to float on the CPU (tests, CPU references, small tables).
  std::vector<float> read_f32(const std::string& name) const;

  // "__metadata__": string -> string. Typed getters throw naming the key and the file when the
  // key is missing or its value does not parse completely.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool has_meta(const std::string& key) const { return metadata_.count(key) != 0; }
  const std::string& meta(const std::string& key) const;
  int64_t meta_int(const std::string& key) const;
  double meta_float(const std::string& key) const;                   // finite values only
  std::vector<int64_t> meta_int_list(const std::string& key) const;  // "1,1,2,2,4"
  // Fallback only when the key is absent; a present but malformed value still throws.
  int64_t meta_int(const std::string& key, int64_t fallback) const;
  double meta_float(const std::string& key, double fallback) const;

 private:
  void open_bytes();  // validates the header of map_[0, size_)
  void parse_header(const char* json, size_t n);
  [[noreturn]] void fail(const std::string& what) const;
  void release();

  std::string path_;
  const uint8_t* map_ = nullptr;  // the mapped file, or owned_'s data
  uint64_t size_ = 0;
  std::vector<uint8_t> owned_;     // the bytes of an in-memory file (empty for a mapped one)
  const uint8_t* data_ = nullptr;  // start of the data section inside map_
  uint64_t data_size_ = 0;
  std::vector<std::string> names_;
  std::map<std::string, StTensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// bfloat16 is the top half of an IEEE float; narrowing rounds to nearest even (NaN stays NaN).
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

}  // namespace vkspec
