#include "eval/fashion_mnist.h"

#include <zlib.h>

#include <memory>

#include "common/error.h"

namespace vkspec {
namespace {

std::vector<uint8_t> gunzip(const std::string& path, size_t max_bytes) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw Error("Fashion-MNIST: cannot open " + path + " (install the Debian package dataset-fashion-mnist)");
  std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(f, gzclose);
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof(buf));
    if (n < 0) throw Error("Fashion-MNIST: " + path + " is not a readable gzip file");
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
    if (out.size() > max_bytes) throw Error("Fashion-MNIST: " + path + " is larger than any Fashion-MNIST file");
  }
  return out;
}

uint32_t be32(const std::vector<uint8_t>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) | b[at + 3];
}

}  // namespace

const char* fashion_mnist_dir() { return "/usr/share/datasets/fashion-mnist"; }

FashionMnist load_fashion_mnist(const std::string& dir, const std::string& split, int64_t limit) {
  if (split != "train" && split != "test") throw Error("Fashion-MNIST: split must be train or test, got " + split);
  const std::string pre = dir + "/" + (split == "train" ? "train" : "t10k");
  const std::string ipath = pre + "-images-idx3-ubyte.gz", lpath = pre + "-labels-idx1-ubyte.gz";
  const std::vector<uint8_t> img = gunzip(ipath, 64u << 20), lab = gunzip(lpath, 1u << 20);
  if (img.size() < 16 || be32(img, 0) != 0x803 || be32(img, 8) != 28 || be32(img, 12) != 28)
    throw Error("Fashion-MNIST: " + ipath + " is not an IDX file of 28x28 images");
  if (lab.size() < 8 || be32(lab, 0) != 0x801) throw Error("Fashion-MNIST: " + lpath + " is not an IDX label file");
  const int64_t n = be32(img, 4);
  if (static_cast<int64_t>(be32(lab, 4)) != n || img.size() != 16 + static_cast<size_t>(n) * 784 ||
      lab.size() != 8 + static_cast<size_t>(n))
    throw Error("Fashion-MNIST: " + ipath + " and " + lpath + " disagree on the image count or are truncated");
  FashionMnist d;
  d.count = limit > 0 ? std::min(limit, n) : n;
  d.images.assign(static_cast<size_t>(d.count * 32 * 32), -1.0f);
  d.labels.resize(static_cast<size_t>(d.count));
  for (int64_t i = 0; i < d.count; ++i) {
    d.labels[static_cast<size_t>(i)] = lab[8 + static_cast<size_t>(i)];
    for (int y = 0; y < 28; ++y)
      for (int x = 0; x < 28; ++x)
        d.images[static_cast<size_t>(i * 1024 + (y + 2) * 32 + x + 2)] =
            static_cast<float>(img[16 + static_cast<size_t>(i) * 784 + y * 28 + x]) / 127.5f - 1.0f;
  }
  return d;
}

}  // namespace vkspec
