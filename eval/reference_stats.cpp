#include "eval/reference_stats.h"

#include <cstdio>
#include <cstring>

#include "engine/model/classifier.h"
#include "engine/vk/cache_file.h"
#include "common/error.h"
#include "eval/fashion_mnist.h"

namespace vkspec {
namespace {

// Version 2 adds the feature vectors. The version is also part of the file name's key, so files of
// version 1 ("fmnist-test-stats-*") are never opened as version 2.
constexpr char kMagic[8] = {'V', 'K', 'S', 'P', 'R', 'E', 'F', '2'};
constexpr int64_t kHeadCount = 4;  // dim, count, feature_count, key

std::string cache_path(Context& ctx, uint64_t key) {
  if (ctx.options().cache_dir.empty()) return "";
  char name[64];
  std::snprintf(name, sizeof(name), "/fmnist-test-ref-%016llx.bin", static_cast<unsigned long long>(key));
  return ctx.options().cache_dir + name;
}

bool read_cached(const std::string& path, uint64_t key, ReferenceSet& out) {
  const std::vector<char> data = read_cache_file(path);
  int64_t head[kHeadCount];
  if (data.size() < 8 + sizeof(head) || std::memcmp(data.data(), kMagic, 8) != 0) return false;
  std::memcpy(head, data.data() + 8, sizeof(head));
  const int64_t dim = head[0], count = head[1], features = head[2];
  if (dim <= 0 || dim > 4096 || count < 2 || features < 0 || features > kMaxReferenceFeatures ||
      static_cast<uint64_t>(head[3]) != key ||
      data.size() != 8 + sizeof(head) + static_cast<size_t>(dim + dim * dim) * sizeof(double) +
                         static_cast<size_t>(features * dim) * sizeof(float))
    return false;
  GaussianStats& s = out.stats;
  s.dim = dim;
  s.count = count;
  s.mean.resize(static_cast<size_t>(dim));
  s.cov.resize(static_cast<size_t>(dim * dim));
  out.feature_count = features;
  out.features.resize(static_cast<size_t>(features * dim));
  const char* p = data.data() + 8 + sizeof(head);
  std::memcpy(s.mean.data(), p, s.mean.size() * sizeof(double));
  p += s.mean.size() * sizeof(double);
  std::memcpy(s.cov.data(), p, s.cov.size() * sizeof(double));
  p += s.cov.size() * sizeof(double);
  std::memcpy(out.features.data(), p, out.features.size() * sizeof(float));
  return true;
}

void write_cached(const std::string& path, uint64_t key, const ReferenceSet& r) {
  const GaussianStats& s = r.stats;
  const int64_t head[kHeadCount] = {s.dim, s.count, r.feature_count, static_cast<int64_t>(key)};
  std::vector<char> out(8 + sizeof(head) + (s.mean.size() + s.cov.size()) * sizeof(double) +
                        r.features.size() * sizeof(float));
  char* p = out.data();
  std::memcpy(p, kMagic, 8);
  std::memcpy(p += 8, head, sizeof(head));
  std::memcpy(p += sizeof(head), s.mean.data(), s.mean.size() * sizeof(double));
  std::memcpy(p += s.mean.size() * sizeof(double), s.cov.data(), s.cov.size() * sizeof(double));
  std::memcpy(p += s.cov.size() * sizeof(double), r.features.data(), r.features.size() * sizeof(float));
  write_cache_file(path, out.data(), out.size());
}

}  // namespace

ReferenceSet fashion_mnist_test_reference(Context& ctx, const std::string& classifier_path,
                                          const std::string& dataset_dir, int64_t limit) {
  const std::vector<char> weights = read_cache_file(classifier_path);
  if (weights.empty()) throw Error("reference statistics: cannot read the classifier " + classifier_path);
  const uint64_t key =
      cache_hash(kMagic, sizeof(kMagic), cache_hash(&limit, sizeof(limit), cache_hash(weights.data(), weights.size())));
  const std::string path = cache_path(ctx, key);
  ReferenceSet r;
  if (!path.empty() && read_cached(path, key, r)) return r;
  const FashionMnist data = load_fashion_mnist(dataset_dir, "test", limit);
  constexpr int64_t kBatch = 100;
  Classifier clf(ctx, classifier_path, kBatch);
  Tensor images = ctx.tensor(DType::F32, {kBatch, 32, 32, 1}, "Fashion-MNIST test images", MemoryUsage::Upload);
  std::vector<float> features;
  for (int64_t first = 0; first < data.count; first += kBatch) {
    const int64_t n = std::min(kBatch, data.count - first);
    ctx.upload(images, 0, data.images.data() + first * 1024, static_cast<size_t>(n * 1024) * 4);
    const ClassifierResult res = clf.run(images.view(), n);
    features.insert(features.end(), res.features.begin(), res.features.end());
  }
  const int64_t dim = clf.feature_dim();
  r.stats = gaussian_stats(features, data.count, dim);
  if (data.count <= kMaxReferenceFeatures) {
    r.feature_count = data.count;
    r.features = std::move(features);
  } else {
    // Evenly spaced over the set (its order is the dataset's), the same on every run.
    r.feature_count = kMaxReferenceFeatures;
    for (int64_t i = 0; i < kMaxReferenceFeatures; ++i) {
      const int64_t row = i * data.count / kMaxReferenceFeatures;
      r.features.insert(r.features.end(), features.begin() + row * dim, features.begin() + (row + 1) * dim);
    }
  }
  if (!path.empty()) write_cached(path, key, r);
  return r;
}

GaussianStats fashion_mnist_test_stats(Context& ctx, const std::string& classifier_path, const std::string& dataset_dir,
                                       int64_t limit) {
  return fashion_mnist_test_reference(ctx, classifier_path, dataset_dir, limit).stats;
}

}  // namespace vkspec
