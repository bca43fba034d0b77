#include "eval/reference_stats.h"

#include <cstdio>
#include <cstring>

#include "engine/model/classifier.h"
#include "engine/vk/cache_file.h"
#include "common/error.h"
#include "eval/fashion_mnist.h"

namespace vkspec {
namespace {

constexpr char kMagic[8] = {'V', 'K', 'S', 'P', 'F', 'I', 'D', '1'};

}  // namespace

GaussianStats fashion_mnist_test_stats(Context& ctx, const std::string& classifier_path, const std::string& dataset_dir,
                                       int64_t limit) {
  const std::vector<char> weights = read_cache_file(classifier_path);
  if (weights.empty()) throw Error("reference statistics: cannot read the classifier " + classifier_path);
  const uint64_t key = cache_hash(&limit, sizeof(limit), cache_hash(weights.data(), weights.size()));
  std::string path;
  if (!ctx.options().cache_dir.empty()) {
    char name[64];
    std::snprintf(name, sizeof(name), "/fmnist-test-stats-%016llx.bin", static_cast<unsigned long long>(key));
    path = ctx.options().cache_dir + name;
    const std::vector<char> data = read_cache_file(path);
    int64_t head[3];
    if (data.size() >= 8 + sizeof(head) && std::memcmp(data.data(), kMagic, 8) == 0) {
      std::memcpy(head, data.data() + 8, sizeof(head));
      const int64_t dim = head[0];
      if (dim > 0 && dim <= 4096 &&
          data.size() == 8 + sizeof(head) + static_cast<size_t>(dim + dim * dim) * sizeof(double) &&
          static_cast<uint64_t>(head[2]) == key) {
        GaussianStats s;
        s.dim = dim;
        s.count = head[1];
        s.mean.resize(static_cast<size_t>(dim));
        s.cov.resize(static_cast<size_t>(dim * dim));
        const char* p = data.data() + 8 + sizeof(head);
        std::memcpy(s.mean.data(), p, s.mean.size() * sizeof(double));
        std::memcpy(s.cov.data(), p + s.mean.size() * sizeof(double), s.cov.size() * sizeof(double));
        return s;
      }
    }
  }
  const FashionMnist data = load_fashion_mnist(dataset_dir, "test", limit);
  constexpr int64_t kBatch = 100;
  Classifier clf(ctx, classifier_path, kBatch);
  Tensor images = ctx.tensor(DType::F32, {kBatch, 32, 32, 1}, "Fashion-MNIST test images", MemoryUsage::Upload);
  std::vector<float> features;
  for (int64_t first = 0; first < data.count; first += kBatch) {
    const int64_t n = std::min(kBatch, data.count - first);
    ctx.upload(images, 0, data.images.data() + first * 1024, static_cast<size_t>(n * 1024) * 4);
    const ClassifierResult r = clf.run(images.view(), n);
    features.insert(features.end(), r.features.begin(), r.features.end());
  }
  GaussianStats s = gaussian_stats(features, data.count, clf.feature_dim());
  if (!path.empty()) {
    const int64_t head[3] = {s.dim, s.count, static_cast<int64_t>(key)};
    std::vector<char> out(8 + sizeof(head) + (s.mean.size() + s.cov.size()) * sizeof(double));
    std::memcpy(out.data(), kMagic, 8);
    std::memcpy(out.data() + 8, head, sizeof(head));
    std::memcpy(out.data() + 8 + sizeof(head), s.mean.data(), s.mean.size() * sizeof(double));
    std::memcpy(out.data() + 8 + sizeof(head) + s.mean.size() * sizeof(double), s.cov.data(),
                s.cov.size() * sizeof(double));
    write_cache_file(path, out.data(), out.size());
  }
  return s;
}

}  // namespace vkspec
