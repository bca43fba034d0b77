#include "engine/model/safetensors_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "engine/vk/tensor.h"

namespace vkspec {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

void SafetensorsWriter::set_metadata(const std::string& key, const std::string& value) {
  for (auto& kv : metadata_) {
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  }
  metadata_.emplace_back(key, value);
}

void SafetensorsWriter::add(const std::string& name, StDType dtype, const std::vector<int64_t>& shape, const void* data,
                            size_t bytes) {
  if (name == "__metadata__") throw Error("safetensors writer: \"__metadata__\" is not a tensor name");
  for (const Entry& e : entries_)
    if (e.name == name) throw Error("safetensors writer: tensor " + name + " added twice");
  uint64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("safetensors writer: tensor " + name + " has negative shape " + shape_text(shape));
    numel *= static_cast<uint64_t>(d);
  }
  if (numel * st_dtype_size(dtype) != bytes)
    throw Error("safetensors writer: tensor " + name + " is " + st_dtype_name(dtype) + " " + shape_text(shape) +
                " but " + std::to_string(bytes) + " bytes were given");
  const auto* p = static_cast<const uint8_t*>(data);
  entries_.push_back({name, dtype, shape, std::vector<uint8_t>(p, p + bytes)});
}

void SafetensorsWriter::add_f32(const std::string& name, const std::vector<int64_t>& shape,
                                const std::vector<float>& values, StDType stored) {
  if (stored == StDType::F32) return add(name, stored, shape, values.data(), values.size() * 4);
  if (stored != StDType::F16 && stored != StDType::BF16)
    throw Error("safetensors writer: tensor " + name + ": floats cannot be stored as " + st_dtype_name(stored));
  std::vector<uint16_t> h(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    h[i] = stored == StDType::F16 ? float_to_half(values[i]) : float_to_bf16(values[i]);
  add(name, stored, shape, h.data(), h.size() * 2);
}

std::string SafetensorsWriter::header() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!metadata_.empty()) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata_) m[k] = v;
    j["__metadata__"] = m;
  }
  uint64_t offset = 0;
  for (const Entry& e : entries_) {
    j[e.name] = {
        {"dtype", st_dtype_name(e.dtype)}, {"shape", e.shape}, {"data_offsets", {offset, offset + e.bytes.size()}}};
    offset += e.bytes.size();
  }
  std::string text = j.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');  // the header length, u64 little-endian
  for (size_t i = 0; i < 8; ++i) out[i] = static_cast<char>(static_cast<uint64_t>(text.size()) >> (8 * i));
  return out + text;
}

std::vector<uint8_t> SafetensorsWriter::take_bytes() {
  const std::string head = header();
  uint64_t total = head.size();
  for (const Entry& e : entries_) total += e.bytes.size();
  std::vector<uint8_t> out;
  out.reserve(total);
  out.insert(out.end(), head.begin(), head.end());
  for (Entry& e : entries_) {
    out.insert(out.end(), e.bytes.begin(), e.bytes.end());
    e.bytes = {};
  }
  entries_.clear();
  metadata_.clear();
  return out;
}

void SafetensorsWriter::write(const std::string& path) const {
  const std::string head = header();
  // Per process: test cases running at once write the same model files, and a shared temporary
  // would let one rename the file another is still writing.
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(path + ": cannot create " + tmp + ": " + std::strerror(errno));
  bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size();
  for (const Entry& e : entries_)  // an empty tensor's data() may be null, which fwrite must not get
    ok = ok && (e.bytes.empty() || std::fwrite(e.bytes.data(), 1, e.bytes.size(), f) == e.bytes.size());
  const int write_errno = errno;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) {
    std::remove(tmp.c_str());
    throw Error(path + ": write failed: " + std::strerror(write_errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw Error(path + ": cannot rename " + tmp + " into place: " + std::strerror(e));
  }
}

}  // namespace vkspec
