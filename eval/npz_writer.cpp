#include "eval/npz_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>

#include "common/error.h"

namespace vkspec {
namespace {

// Every entry carries ZIP64 sizes and the archive a ZIP64 end record, needed or not: one layout
// for a 10-image test and a 10 GB evaluation set, so the tests exercise the one that matters.
constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEnd = 0x06054b50, kZip64End = 0x06064b50,
                   kZip64Locator = 0x07064b50;
constexpr uint16_t kVersion = 45;     // ZIP64
constexpr uint16_t kDate1980 = 0x21;  // 1980-01-01, 00:00: the same bytes for the same arrays
constexpr uint32_t kMax32 = 0xFFFFFFFFu;

class Bytes {
 public:
  Bytes& u16(uint16_t v) { return raw(v, 2); }
  Bytes& u32(uint32_t v) { return raw(v, 4); }
  Bytes& u64(uint64_t v) { return raw(v, 8); }
  Bytes& text(const std::string& s) {
    b_.insert(b_.end(), s.begin(), s.end());
    return *this;
  }
  const std::string& str() const { return b_; }

 private:
  Bytes& raw(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    return *this;
  }
  std::string b_;
};

// The .npy preamble, padded so that the data starts at a multiple of 64 bytes as numpy writes it.
std::string npy_header(NpyType type, const std::vector<int64_t>& shape) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  if (!dims.empty()) dims.resize(dims.size() - (shape.size() == 1 ? 1 : 2));  // a 1-tuple keeps its comma: "(5,)"
  std::string dict = std::string("{'descr': '") + (type == NpyType::U8 ? "|u1" : "<i4") +
                     "', 'fortran_order': False, 'shape': (" + dims + "), }";
  const size_t unpadded = 10 + dict.size() + 1;
  dict += std::string((64 - unpadded % 64) % 64, ' ') + "\n";
  return Bytes().text("\x93NUMPY").u16(0x0001).u16(static_cast<uint16_t>(dict.size())).text(dict).str();
}

uint64_t item_size(NpyType type) { return type == NpyType::U8 ? 1 : 4; }

}  // namespace

NpzWriter::NpzWriter(std::string path) : path_(std::move(path)), out_(path_, std::ios::binary | std::ios::trunc) {
  if (!out_) throw Error("cannot create " + path_);
}

NpzWriter::~NpzWriter() {
  if (closed_) return;
  out_.close();
  std::remove(path_.c_str());
}

void NpzWriter::check_stream(const char* what) {
  if (!out_) throw Error("writing " + path_ + " failed (" + what + "; disk full?)");
}

void NpzWriter::put(const void* data, size_t bytes) {
  out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  check_stream("data");
}

void NpzWriter::begin_array(const std::string& name, NpyType type, const std::vector<int64_t>& shape) {
  if (open_entry_ || closed_) throw Error(path_ + ": begin_array while an array is open or after close");
  const std::string header = npy_header(type, shape);
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error(path_ + ": negative dimension in the shape of " + name);
    n *= static_cast<uint64_t>(d);
  }
  Entry e;
  e.name = name + ".npy";
  e.offset = static_cast<uint64_t>(out_.tellp());
  e.size = header.size() + n * item_size(type);
  // Sizes live in the ZIP64 extra field; the CRC is patched in by end_array().
  const std::string local = Bytes()
                                .u32(kLocalHeader)
                                .u16(kVersion)
                                .u16(0)
                                .u16(0)
                                .u16(0)
                                .u16(kDate1980)
                                .u32(0)
                                .u32(kMax32)
                                .u32(kMax32)
                                .u16(static_cast<uint16_t>(e.name.size()))
                                .u16(20)
                                .text(e.name)
                                .u16(0x0001)
                                .u16(16)
                                .u64(e.size)
                                .u64(e.size)
                                .str();
  put(local.data(), local.size());
  entries_.push_back(e);
  open_entry_ = true;
  written_ = 0;
  write(header.data(), header.size());
}

void NpzWriter::write(const void* data, size_t bytes) {
  if (!open_entry_) throw Error(path_ + ": write outside an array");
  Entry& e = entries_.back();
  if (written_ + bytes > e.size) throw Error(path_ + ": more data than the shape of " + e.name + " holds");
  const auto* p = static_cast<const Bytef*>(data);
  for (size_t done = 0; done < bytes;) {  // zlib counts in uInt
    const uInt chunk = static_cast<uInt>(std::min<size_t>(bytes - done, 1u << 30));
    e.crc = static_cast<uint32_t>(crc32(e.crc, p + done, chunk));
    done += chunk;
  }
  put(data, bytes);
  written_ += bytes;
}

void NpzWriter::end_array() {
  if (!open_entry_) throw Error(path_ + ": end_array without an array");
  const Entry& e = entries_.back();
  if (written_ != e.size)
    throw Error(path_ + ": " + e.name + " got " + std::to_string(written_) + " bytes, its shape needs " +
                std::to_string(e.size));
  const std::streampos end = out_.tellp();
  out_.seekp(static_cast<std::streamoff>(e.offset + 14));
  const std::string crc = Bytes().u32(e.crc).str();
  put(crc.data(), crc.size());
  out_.seekp(end);
  open_entry_ = false;
}

void NpzWriter::add_array(const std::string& name, NpyType type, const std::vector<int64_t>& shape, const void* data) {
  begin_array(name, type, shape);
  write(data, entries_.back().size - written_);
  end_array();
}

void NpzWriter::close() {
  if (open_entry_) throw Error(path_ + ": close with an array still open");
  if (closed_) return;
  const uint64_t directory_at = static_cast<uint64_t>(out_.tellp());
  Bytes d;
  for (const Entry& e : entries_)
    d.u32(kCentralHeader)
        .u16(kVersion)
        .u16(kVersion)
        .u16(0)
        .u16(0)
        .u16(0)
        .u16(kDate1980)
        .u32(e.crc)
        .u32(kMax32)
        .u32(kMax32)
        .u16(static_cast<uint16_t>(e.name.size()))
        .u16(28)
        .u16(0)
        .u16(0)
        .u16(0)
        .u32(0)
        .u32(kMax32)
        .text(e.name)
        .u16(0x0001)
        .u16(24)
        .u64(e.size)
        .u64(e.size)
        .u64(e.offset);
  const uint64_t directory_size = d.str().size(), zip64_end_at = directory_at + directory_size;
  const uint64_t count = entries_.size();
  d.u32(kZip64End)
      .u64(44)
      .u16(kVersion)
      .u16(kVersion)
      .u32(0)
      .u32(0)
      .u64(count)
      .u64(count)
      .u64(directory_size)
      .u64(directory_at);
  d.u32(kZip64Locator).u32(0).u64(zip64_end_at).u32(1);
  d.u32(kEnd).u16(0).u16(0).u16(0xFFFF).u16(0xFFFF).u32(kMax32).u32(kMax32).u16(0);
  put(d.str().data(), d.str().size());
  out_.close();
  check_stream("closing");
  closed_ = true;
}

}  // namespace vkspec
