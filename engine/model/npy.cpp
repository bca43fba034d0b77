#include "engine/model/npy.h"

#include <cstring>
#include <fstream>
#include <iterator>

#include "common/error.h"
#include "engine/vk/tensor.h"

namespace vkspec {

namespace {

// The header is a Python dict literal; the value of `key` is the text after "'key':" up to the
// next top-level comma or the closing brace (shape tuples keep their commas inside parentheses).
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error(path + ": .npy header has no '" + key + "'");
  size_t i = header.find(':', k);
  if (i == std::string::npos) throw Error(path + ": .npy header is malformed at '" + key + "'");
  ++i;
  int depth = 0;
  std::string v;
  for (; i < header.size(); ++i) {
    const char c = header[i];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (c != ' ') v += c;
  }
  return v;
}

// "(1, 17, 2048)", "(2048,)", "()": digits between commas; a trailing comma is Python's 1-tuple.
std::vector<int64_t> parse_shape(const std::string& v, const std::string& path) {
  if (v.size() < 2 || v.front() != '(' || v.back() != ')') throw Error(path + ": .npy shape '" + v + "' is malformed");
  std::vector<int64_t> shape;
  std::string num;
  for (size_t i = 1; i < v.size(); ++i) {
    const char c = v[i];
    if (c >= '0' && c <= '9') {
      if (num.size() >= 12) throw Error(path + ": .npy shape '" + v + "' is implausibly large");
      num += c;
    } else if (c == ',' || c == ')') {
      if (!num.empty())
        shape.push_back(std::stoll(num));
      else if (c == ',')
        throw Error(path + ": .npy shape '" + v + "' is malformed");
      num.clear();
    } else {
      throw Error(path + ": .npy shape '" + v + "' is malformed");
    }
  }
  return shape;
}

}  // namespace

NpyArray read_npy_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  static const char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), magic, 6) != 0)
    throw Error(path + ": not a .npy file (bad magic)");
  const uint8_t major = bytes[6];
  size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(path + ": .npy file truncated in its preamble");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<size_t>(bytes[11]) << 24);
    header_at = 12;
  } else {
    throw Error(path + ": .npy format version " + std::to_string(major) + " is not supported");
  }
  if (header_len > bytes.size() - header_at) throw Error(path + ": .npy header runs past the end of the file");
  const std::string header(reinterpret_cast<const char*>(bytes.data() + header_at), header_len);
  const std::string descr = dict_value(header, "descr", path);
  if (dict_value(header, "fortran_order", path) != "False")
    throw Error(path + ": .npy array is in Fortran order; save it C-contiguous");
  size_t elem = 0;
  if (descr == "'<f4'")
    elem = 4;
  else if (descr == "'<f2'")
    elem = 2;
  else
    throw Error(path + ": .npy dtype " + descr + " is not little-endian float32 or float16");
  NpyArray a;
  a.shape = parse_shape(dict_value(header, "shape", path), path);
  uint64_t n = 1;
  for (int64_t d : a.shape) {
    if (d < 0 || (d > 0 && n > (uint64_t{1} << 40) / static_cast<uint64_t>(d)))
      throw Error(path + ": .npy shape is implausibly large");
    n *= static_cast<uint64_t>(d);
  }
  const size_t data_at = header_at + header_len;
  if (bytes.size() - data_at != n * elem)
    throw Error(path + ": .npy data is " + std::to_string(bytes.size() - data_at) + " bytes, the shape needs " +
                std::to_string(n * elem));
  a.values.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (elem == 4) {
      std::memcpy(&a.values[i], bytes.data() + data_at + 4 * i, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, bytes.data() + data_at + 2 * i, 2);
      a.values[i] = half_to_float(h);
    }
  }
  return a;
}

}  // namespace vkspec
