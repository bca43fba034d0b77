#include "eval/image_judge.h"

#include "common/error.h"

namespace vkspec {

ImageJudge::ImageJudge(Context& ctx, Tokenizer& tokenizer, int64_t grid, const std::string& classifier_path)
    : ctx_(ctx),
      tokenizer_(tokenizer),
      grid_(grid),
      classifier_path_(classifier_path),
      classifier_(ctx, classifier_path, kBatch),
      ids_(ctx.tensor(DType::U32, {kBatch, grid * grid}, "judged ids", MemoryUsage::Upload)) {}

void ImageJudge::add(const std::vector<int32_t>& tokens, int64_t class_id) {
  if (static_cast<int64_t>(tokens.size()) != grid_ * grid_)
    throw Error("image judge: " + std::to_string(tokens.size()) + " tokens for a " + std::to_string(grid_) + "x" +
                std::to_string(grid_) + " grid");
  for (int32_t t : tokens) pending_tokens_.push_back(static_cast<uint32_t>(t));
  pending_classes_.push_back(class_id);
  if (static_cast<int64_t>(pending_classes_.size()) == kBatch) flush();
}

void ImageJudge::flush() {
  const int64_t n = static_cast<int64_t>(pending_classes_.size());
  if (n == 0) return;
  ctx_.upload(ids_, 0, pending_tokens_.data(), pending_tokens_.size() * 4);
  CommandStream s(ctx_);
  const TensorView px = tokenizer_.decode(s, ids_, n, grid_);
  s.submit_and_wait();
  const ClassifierResult c = classifier_.run(px, n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = c.predictions[static_cast<size_t>(i)];
    correct_ += p == pending_classes_[static_cast<size_t>(i)];
    current_.predicted.push_back(p);
  }
  current_.features.insert(current_.features.end(), c.features.begin(), c.features.end());
  current_.feature_dim = c.feature_dim;
  current_.count += n;
  pending_tokens_.clear();
  pending_classes_.clear();
}

Verdict ImageJudge::take() {
  flush();
  Verdict v = std::move(current_);
  v.accuracy = v.count ? static_cast<double>(correct_) / static_cast<double>(v.count) : 0.0;
  current_ = Verdict{};
  correct_ = 0;
  return v;
}

}  // namespace vkspec
