#include "engine/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "engine/vk/tensor.h"

// Tensor bytes are little-endian and are reinterpreted in place.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the safetensors reader assumes a little-endian host");

namespace vkspec {

namespace {

using json = nlohmann::json;

// Real headers are a few hundred KB (LlamaGen-XXL: ~60 KB); anything near this is corruption.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

// A JSON value as a non-negative integer; explains itself in *why otherwise.
bool json_to_u64(const json& v, uint64_t* out, std::string* why) {
  if (!v.is_number_integer()) {
    *why = v.dump() + " is not an integer";
    return false;
  }
  if (!v.is_number_unsigned()) {
    *why = v.dump() + " is negative";
    return false;
  }
  *out = v.get<uint64_t>();
  return true;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool parse_int(const std::string& s, int64_t* out) {
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, *out);
  return !s.empty() && r.ec == std::errc() && r.ptr == end;
}

[[noreturn]] void fail_in(const std::string& path, const std::string& what) { throw Error(path + ": " + what); }

// The header as JSON, refusing duplicate keys: nlohmann keeps the last of them, so a duplicated
// tensor name would silently pick one.
json parse_header_json(const std::string& path, const char* text, size_t n) {
  std::set<std::string> seen;
  std::string duplicate;
  auto on_event = [&](int depth, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::key && depth == 1 && !seen.insert(parsed.get<std::string>()).second &&
        duplicate.empty())
      duplicate = parsed.get<std::string>();
    return true;
  };
  json header;
  try {
    header = json::parse(text, text + n, on_event);
  } catch (const json::exception& e) {
    fail_in(path, std::string("invalid header JSON: ") + e.what());
  }
  if (!header.is_object()) fail_in(path, "header is not a JSON object");
  if (!duplicate.empty()) fail_in(path, "tensor " + duplicate + " appears twice in the header");
  return header;
}

// A tensor's shape, and its element count, bounded so that it and the byte size fit in int64.
void parse_shape(const json& shape, StTensorInfo& t, const std::function<void(const std::string&)>& bad) {
  if (!shape.is_array()) bad("shape " + shape.dump() + " is not an array");
  bool has_zero = false;
  for (const json& d : shape) {
    uint64_t v = 0;
    std::string why;
    if (!json_to_u64(d, &v, &why)) bad("shape " + shape.dump() + ": dimension " + why);
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) bad("shape " + shape.dump() + " is too large");
    t.shape.push_back(static_cast<int64_t>(v));
    has_zero |= v == 0;
  }
  const uint64_t max_elems = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / st_dtype_size(t.dtype);
  uint64_t numel = 1;
  if (has_zero) {
    numel = 0;
  } else {
    for (int64_t d : t.shape) {
      if (numel > max_elems / static_cast<uint64_t>(d)) bad("shape " + t.shape_str() + " overflows a 64-bit size");
      numel *= static_cast<uint64_t>(d);
    }
  }
  t.numel = static_cast<int64_t>(numel);
}

// A tensor's data_offsets: inside the data section of data_size bytes, as many as its shape needs.
void parse_offsets(const json& off, uint64_t data_size, StTensorInfo& t,
                   const std::function<void(const std::string&)>& bad) {
  if (!off.is_array() || off.size() != 2) bad("data_offsets " + off.dump() + " is not [begin, end]");
  std::string why;
  if (!json_to_u64(off[0], &t.begin, &why) || !json_to_u64(off[1], &t.end, &why)) bad("data_offsets " + why);
  const std::string range = "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + ")";
  if (t.begin > t.end) bad(range + " ends before it begins");
  if (t.end > data_size)
    bad(range + " run past the data section (" + std::to_string(data_size) + " bytes): truncated file?");
  const uint64_t want = static_cast<uint64_t>(t.numel) * st_dtype_size(t.dtype);
  if (t.bytes() != want)
    bad(range + " hold " + std::to_string(t.bytes()) + " bytes but " + st_dtype_name(t.dtype) + " " + t.shape_str() +
        " needs " + std::to_string(want));
}

StTensorInfo parse_tensor_entry(const std::string& path, const std::string& name, const json& entry,
                                uint64_t data_size) {
  const std::function<void(const std::string&)> bad = [&](const std::string& what) {
    fail_in(path, "tensor " + name + ": " + what);
  };
  if (!entry.is_object()) bad("entry is not a JSON object");
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(field)) bad(std::string("missing \"") + field + "\"");
  StTensorInfo t;
  t.name = name;
  const json& dt = entry["dtype"];
  if (!dt.is_string()) bad("dtype " + dt.dump() + " is not a string");
  if (!st_dtype_parse(dt.get<std::string>(), &t.dtype))
    bad("unsupported dtype " + dt.get<std::string>() + " (accepted: F32, F16, BF16, I32, I64, U8)");
  parse_shape(entry["shape"], t, bad);
  parse_offsets(entry["data_offsets"], data_size, t, bad);
  return t;
}

// The tensors' names in the order of their data, refusing tensors whose bytes overlap.
std::vector<std::string> names_in_file_order(const std::string& path,
                                             const std::map<std::string, StTensorInfo>& tensors) {
  std::vector<const StTensorInfo*> order;
  for (const auto& kv : tensors) order.push_back(&kv.second);
  std::sort(order.begin(), order.end(), [](const StTensorInfo* a, const StTensorInfo* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->name < b->name;
  });
  const StTensorInfo* prev = nullptr;
  for (const StTensorInfo* t : order) {
    if (t->bytes() == 0) continue;
    if (prev && t->begin < prev->end)
      fail_in(path, "tensors " + prev->name + " [" + std::to_string(prev->begin) + ", " + std::to_string(prev->end) +
                        ") and " + t->name + " [" + std::to_string(t->begin) + ", " + std::to_string(t->end) +
                        ") overlap");
    prev = t;
  }
  std::vector<std::string> names;
  for (const StTensorInfo* t : order) names.push_back(t->name);
  return names;
}

}  // namespace

size_t st_dtype_size(StDType t) {
  switch (t) {
    case StDType::F32: return 4;
    case StDType::F16: return 2;
    case StDType::BF16: return 2;
    case StDType::I32: return 4;
    case StDType::I64: return 8;
    case StDType::U8: return 1;
  }
  return 0;
}

const char* st_dtype_name(StDType t) {
  switch (t) {
    case StDType::F32: return "F32";
    case StDType::F16: return "F16";
    case StDType::BF16: return "BF16";
    case StDType::I32: return "I32";
    case StDType::I64: return "I64";
    case StDType::U8: return "U8";
  }
  return "?";
}

bool st_dtype_parse(const std::string& s, StDType* out) {
  for (StDType t : {StDType::F32, StDType::F16, StDType::BF16, StDType::I32, StDType::I64, StDType::U8}) {
    if (s == st_dtype_name(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

std::string StTensorInfo::shape_str() const {
  std::ostringstream s;
  s << '[';
  for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << ']';
  return s.str();
}

float bf16_to_float(uint16_t b) {
  const uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  // Rounding could carry a NaN's payload into the exponent and make it infinity.
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    fail("file is " + std::to_string(size_) + " bytes, too short for the 8-byte header length");
  }
  void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);  // the mapping keeps the file alive
  if (m == MAP_FAILED) fail(std::string("mmap failed: ") + std::strerror(map_errno));
  map_ = static_cast<const uint8_t*>(m);
  open_bytes();
}

SafetensorsFile::SafetensorsFile(const std::string& name, std::vector<uint8_t> bytes)
    : path_(name), size_(bytes.size()), owned_(std::move(bytes)) {
  if (size_ < 8) fail(std::to_string(size_) + " bytes, too short for the 8-byte header length");
  map_ = owned_.data();
  open_bytes();
}

void SafetensorsFile::open_bytes() {
  try {
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | map_[i];
    if (n > size_ - 8)
      fail("header length " + std::to_string(n) + " exceeds the file (" + std::to_string(size_) +
           " bytes): truncated or not a safetensors file");
    if (n > kMaxHeaderBytes)
      fail("header length " + std::to_string(n) + " is implausible (limit " + std::to_string(kMaxHeaderBytes) +
           " bytes)");
    data_ = map_ + 8 + n;
    data_size_ = size_ - 8 - n;
    parse_header(reinterpret_cast<const char*>(map_ + 8), static_cast<size_t>(n));
  } catch (...) {
    release();
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() { release(); }

SafetensorsFile::SafetensorsFile(SafetensorsFile&& o) noexcept { *this = std::move(o); }

SafetensorsFile& SafetensorsFile::operator=(SafetensorsFile&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    map_ = o.map_;
    size_ = o.size_;
    data_ = o.data_;
    data_size_ = o.data_size_;
    names_ = std::move(o.names_);
    tensors_ = std::move(o.tensors_);
    metadata_ = std::move(o.metadata_);
    owned_ = std::move(o.owned_);  // a moved vector keeps its buffer, so map_ stays valid
    o.map_ = o.data_ = nullptr;
    o.size_ = o.data_size_ = 0;
  }
  return *this;
}

void SafetensorsFile::release() {
  if (map_ && owned_.empty()) ::munmap(const_cast<uint8_t*>(map_), size_);
  owned_ = {};
  map_ = data_ = nullptr;
}

void SafetensorsFile::fail(const std::string& what) const { fail_in(path_, what); }

void SafetensorsFile::parse_header(const char* text, size_t n) {
  const json header = parse_header_json(path_, text, n);
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) fail("__metadata__ is not a JSON object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) fail("metadata \"" + key + "\" is " + value.dump() + ", not a string");
        metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    tensors_.emplace(name, parse_tensor_entry(path_, name, entry, data_size_));
  }
  names_ = names_in_file_order(path_, tensors_);
}

const StTensorInfo& SafetensorsFile::info(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) fail("no tensor " + name + " (the file has " + std::to_string(tensors_.size()) + ")");
  return it->second;
}

const uint8_t* SafetensorsFile::data(const std::string& name) const { return data_ + info(name).begin; }

std::vector<float> SafetensorsFile::read_f32(const std::string& name) const {
  const StTensorInfo& t = info(name);
  const uint8_t* p = data_ + t.begin;
  std::vector<float> out(static_cast<size_t>(t.numel));
  switch (t.dtype) {
    case StDType::F32:
      if (!out.empty()) std::memcpy(out.data(), p, out.size() * 4);
      break;
    case StDType::F16:
    case StDType::BF16:
      for (size_t i = 0; i < out.size(); ++i) {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        out[i] = t.dtype == StDType::F16 ? half_to_float(h) : bf16_to_float(h);
      }
      break;
    default: fail("tensor " + name + " is " + st_dtype_name(t.dtype) + ", not a floating-point tensor");
  }
  return out;
}

const std::string& SafetensorsFile::meta(const std::string& key) const {
  auto it = metadata_.find(key);
  if (it == metadata_.end())
    fail("metadata \"" + key + "\" is missing" + (metadata_.empty() ? " (the file has no __metadata__)" : ""));
  return it->second;
}

int64_t SafetensorsFile::meta_int(const std::string& key) const {
  const std::string& s = meta(key);
  int64_t v = 0;
  if (!parse_int(s, &v)) fail("metadata \"" + key + "\" = \"" + s + "\" is not an integer");
  return v;
}

double SafetensorsFile::meta_float(const std::string& key) const {
  const std::string& s = meta(key);
  double v = 0;
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, v);
  if (s.empty() || r.ec != std::errc() || r.ptr != end || !std::isfinite(v))
    fail("metadata \"" + key + "\" = \"" + s + "\" is not a finite number");
  return v;
}

std::vector<int64_t> SafetensorsFile::meta_int_list(const std::string& key) const {
  const std::string& s = meta(key);
  std::vector<int64_t> out;
  if (trim(s).empty()) return out;
  std::istringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    int64_t v = 0;
    if (!parse_int(trim(item), &v))
      fail("metadata \"" + key + "\" = \"" + s + "\" is not a comma-separated integer list");
    out.push_back(v);
  }
  if (s.back() == ',') fail("metadata \"" + key + "\" = \"" + s + "\" is not a comma-separated integer list");
  return out;
}

int64_t SafetensorsFile::meta_int(const std::string& key, int64_t fallback) const {
  return has_meta(key) ? meta_int(key) : fallback;
}

double SafetensorsFile::meta_float(const std::string& key, double fallback) const {
  return has_meta(key) ? meta_float(key) : fallback;
}

}  // namespace vkspec
