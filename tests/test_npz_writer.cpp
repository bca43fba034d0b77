// eval/npz_writer: the bytes numpy and the ADM evaluation suite rely on (tools/test_sample_outputs.py
// reads whole files with numpy), and that misuse fails instead of writing a file that looks
// complete.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

#include "common/error.h"
#include "eval/npz_writer.h"
#include "tests/support/python_reference.h"

namespace vkspec {
namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(NpzWriter, EntriesAreStoredNpyWithAlignedDataAndZip64Records) {
  const std::string path = testing::scratch_dir("npz_layout") + "/a.npz";
  const uint8_t pixels[6] = {1, 2, 3, 4, 5, 6};
  const int32_t labels[2] = {7, -1};
  {
    NpzWriter w(path);
    w.add_array("arr_0", NpyType::U8, {2, 1, 1, 3}, pixels);
    w.add_array("labels", NpyType::I32, {2}, labels);
    w.close();
  }
  const std::string b = bytes_of(path);
  ASSERT_GT(b.size(), 200u);
  EXPECT_EQ(b.substr(0, 4), std::string("PK\x03\x04"));
  // Local header (30) + "arr_0.npy" + ZIP64 extra (20), then the .npy with its data at a multiple of 64.
  const size_t npy = 30 + 9 + 20;
  EXPECT_EQ(b.substr(npy, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len = static_cast<uint8_t>(b[npy + 8]) | (static_cast<uint8_t>(b[npy + 9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string header = b.substr(npy + 10, header_len);
  EXPECT_NE(header.find("'descr': '|u1', 'fortran_order': False, 'shape': (2, 1, 1, 3), }"), std::string::npos)
      << header;
  EXPECT_EQ(b.substr(npy + 10 + header_len, 6), std::string("\x01\x02\x03\x04\x05\x06", 6));
  EXPECT_NE(b.find("'shape': (2,), }"), std::string::npos);  // a 1-tuple keeps its comma
  // The end record, right after the ZIP64 end record (56 bytes) and its locator (20).
  EXPECT_EQ(b.substr(b.size() - 22, 4), std::string("PK\x05\x06"));
  EXPECT_EQ(b.substr(b.size() - 42, 4), std::string("PK\x06\x07"));
  EXPECT_EQ(b.substr(b.size() - 98, 4), std::string("PK\x06\x06"));
}

TEST(NpzWriter, AnArrayShortOfItsShapeIsAnErrorAndTheFileIsRemoved) {
  const std::string path = testing::scratch_dir("npz_short") + "/short.npz";
  {
    NpzWriter w(path);
    w.begin_array("arr_0", NpyType::I32, {3});
    const int32_t two[2] = {1, 2};
    w.write(two, sizeof(two));
    EXPECT_THROW(w.end_array(), Error);
    EXPECT_THROW(w.write(two, sizeof(two)), Error);  // 16 bytes into 12
    EXPECT_TRUE(exists(path));
  }
  EXPECT_FALSE(exists(path)) << "a file never closed must not stay behind";
}

TEST(NpzWriter, AnUnwritablePathNamesTheFile) {
  try {
    NpzWriter w("/nonexistent/folder/x.npz");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/folder/x.npz"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkspec
