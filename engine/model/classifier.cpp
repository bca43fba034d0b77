#include "engine/model/classifier.h"

#include "engine/ops/conv2d.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/matmul.h"
#include "common/error.h"

namespace vkspec {

Classifier::Conv Classifier::conv(WeightStore& ws, const std::string& name, int64_t cin, int64_t cout) {
  return {ws.load(name + ".weight", {cout, cin, 3, 3}, DType::F32), ws.load(name + ".bias", {cout}, DType::F32), cin,
          cout};
}

Classifier::Classifier(Context& ctx, const std::string& path, int64_t max_images)
    : ctx_(ctx), path_(path), max_images_(max_images) {
  WeightStore ws(ctx, path);
  const SafetensorsFile& f = ws.file();
  require_kind(f, path, "classifier", "a vkspec classifier");
  size_ = f.meta_int("image_size");
  in_ch_ = f.meta_int("in_channels");
  classes_ = f.meta_int("num_classes");
  features_ = f.meta_int("feature_dim");
  if (size_ != 32 || in_ch_ < 1 || in_ch_ > 4 || classes_ < 1 || features_ < 1 || max_images < 1)
    throw Error(path + ": classifier metadata describes an unsupported network (image_size must be 32)");
  convs_.push_back(conv(ws, "conv1a", in_ch_, 32));
  convs_.push_back(conv(ws, "conv1b", 32, 32));
  convs_.push_back(conv(ws, "conv2a", 32, 64));
  convs_.push_back(conv(ws, "conv2b", 64, 64));
  convs_.push_back(conv(ws, "conv3a", 64, 128));
  // fc1 reads PyTorch's NCHW flatten (c * 16 + y * 4 + x); our activations are channel-last
  // ((y * 4 + x) * 128 + c): permute its columns once here.
  const int64_t flat = 128 * 4 * 4;
  if (f.info("fc1.weight").shape != std::vector<int64_t>{features_, flat})
    throw Error(path + ": fc1.weight has shape " + f.info("fc1.weight").shape_str() + ", expected [" +
                std::to_string(features_) + ", " + std::to_string(flat) + "]");
  const std::vector<float> w = f.read_f32("fc1.weight");
  std::vector<float> perm(w.size());
  for (int64_t o = 0; o < features_; ++o)
    for (int64_t c = 0; c < 128; ++c)
      for (int64_t p = 0; p < 16; ++p)
        perm[static_cast<size_t>(o * flat + p * 128 + c)] = w[static_cast<size_t>(o * flat + c * 16 + p)];
  fc1_w_ = ctx.tensor(DType::F32, {features_, flat}, "fc1.weight (channel-last)");
  ctx.upload(fc1_w_, perm.data(), perm.size() * 4);
  fc1_b_ = ws.load("fc1.bias", {features_}, DType::F32);
  fc2_w_ = ws.load("fc2.weight", {classes_, features_}, DType::F32);
  fc2_b_ = ws.load("fc2.bias", {classes_}, DType::F32);
  for (const auto& n : ws.unused())
    if (n != "fc1.weight") throw Error(path + ": unexpected tensor " + n + " in a classifier file");

  const int64_t act = max_images * 32 * 32 * 32;
  a_ = ctx.tensor(DType::F32, {act}, "classifier activations a");
  b_ = ctx.tensor(DType::F32, {act}, "classifier activations b");
  feat_ = ctx.tensor(DType::F32, {max_images, features_}, "classifier features");
  logits_ = ctx.tensor(DType::F32, {max_images, classes_}, "classifier logits");
  feat_host_ = ctx.tensor(DType::F32, {max_images, features_}, "classifier features (host)", MemoryUsage::Readback);
  logits_host_ = ctx.tensor(DType::F32, {max_images, classes_}, "classifier logits (host)", MemoryUsage::Readback);
}

ClassifierResult Classifier::run(const TensorView& images, int64_t n) {
  if (n < 1 || n > max_images_)
    throw Error(path_ + ": classify " + std::to_string(n) + " images, at most " + std::to_string(max_images_));
  if (images.numel() != n * size_ * size_ * in_ch_) throw Error(path_ + ": classifier input has the wrong size");
  auto view = [&](const Tensor& t, int64_t h, int64_t c) {
    TensorView v = t.view();
    v.shape = {n, h, h, c};
    v.bytes = static_cast<VkDeviceSize>(n * h * h * c) * 4;
    return v;
  };
  CommandStream s(ctx_);
  TensorView x = images.reshape({n, size_, size_, in_ch_});
  const Tensor* bufs[2] = {&a_, &b_};
  int cur = 0;
  int64_t side = size_;
  for (size_t i = 0; i < convs_.size(); ++i) {
    const Conv& c = convs_[i];
    TensorView y = view(*bufs[cur], side, c.cout);
    ops::conv2d(s, x, c.w, c.b, y, ops::Conv2dParams::same(3));
    ops::bias_act(s, y, TensorView{}, y, ops::Activation::Relu);
    x = y;
    cur ^= 1;
    if (i == 1 || i == 3 || i == 4) {  // pool after conv1b, conv2b, conv3a
      TensorView p = view(*bufs[cur], side / 2, c.cout);
      ops::max_pool_2x2(s, x, p);
      x = p;
      cur ^= 1;
      side /= 2;
    }
  }
  const TensorView flat = x.reshape({n, x.numel() / n});
  const TensorView feat = feat_.view().rows(0, n), logits = logits_.view().rows(0, n);
  ops::matmul(s, flat, fc1_w_, feat);
  ops::bias_act(s, feat, fc1_b_, feat, ops::Activation::Relu);
  ops::matmul(s, feat, fc2_w_, logits);
  ops::bias_act(s, logits, fc2_b_, logits, ops::Activation::None);
  s.copy(feat, feat_host_.view().rows(0, n));
  s.copy(logits, logits_host_.view().rows(0, n));
  s.submit_and_wait();
  ClassifierResult r;
  r.feature_dim = features_;
  r.features.resize(static_cast<size_t>(n * features_));
  ctx_.download(feat_host_, 0, r.features.data(), r.features.size() * 4);
  std::vector<float> l(static_cast<size_t>(n * classes_));
  ctx_.download(logits_host_, 0, l.data(), l.size() * 4);
  for (int64_t i = 0; i < n; ++i) {
    int32_t best = 0;
    for (int64_t k = 1; k < classes_; ++k)
      if (l[static_cast<size_t>(i * classes_ + k)] > l[static_cast<size_t>(i * classes_ + best)])
        best = static_cast<int32_t>(k);
    r.predictions.push_back(best);
  }
  return r;
}

}  // namespace vkspec
