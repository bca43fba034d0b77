#pragma once
// The shipped Fashion-MNIST classifier (tools/vkspec_models.py `Classifier`) on the engine: class
// predictions for class accuracy and its 256-d penultimate features for FID. Input images are
// channel-last f32 [N, 32, 32, 1] in [-1, 1], as the VQ decoder emits them.
#include <string>
#include <vector>

#include "engine/model/weights.h"
#include "engine/vk/command_stream.h"

namespace vkspec {

struct ClassifierResult {
  std::vector<int32_t> predictions;  // [N]
  std::vector<float> features;       // [N, feature_dim]
  int64_t feature_dim = 0;
};

class Classifier {
 public:
  Classifier(Context& ctx, const std::string& path, int64_t max_images = 64);

  int64_t image_size() const { return size_; }
  int64_t in_channels() const { return in_ch_; }
  int64_t num_classes() const { return classes_; }
  int64_t feature_dim() const { return features_; }
  // images: f32 [n, size, size, in_channels] (device). Runs, waits and returns on the host.
  ClassifierResult run(const TensorView& images, int64_t n);

 private:
  struct Conv {
    Tensor w, b;
    int64_t cin, cout;
  };
  Conv conv(WeightStore& ws, const std::string& name, int64_t cin, int64_t cout);

  Context& ctx_;
  std::string path_;
  int64_t size_ = 32, in_ch_ = 1, classes_ = 10, features_ = 256, max_images_;
  std::vector<Conv> convs_;  // conv1a, conv1b, conv2a, conv2b, conv3a
  Tensor fc1_w_, fc1_b_, fc2_w_, fc2_b_;
  Tensor a_, b_, feat_, logits_, feat_host_, logits_host_;
};

}  // namespace vkspec
