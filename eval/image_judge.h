#pragma once
// Judges generated images: VQ-decodes token grids in batches, runs the shipped classifier, and
// keeps each image's predicted class and features (class accuracy, FID).
#include <memory>
#include <string>
#include <vector>

#include "engine/model/classifier.h"
#include "engine/model/tokenizer.h"

namespace vkspec {

struct Verdict {
  int64_t count = 0;
  double accuracy = 0;             // fraction classified as the class they were generated for
  std::vector<int64_t> predicted;  // [count]: the classifier's class of each image
  std::vector<float> features;     // [count, feature_dim]
  int64_t feature_dim = 0;
};

class ImageJudge {
 public:
  static constexpr int64_t kBatch = 16;  // images per decode + classify (the VQ model's batch)
  ImageJudge(Context& ctx, Tokenizer& tokenizer, int64_t grid, const std::string& classifier_path);

  void add(const std::vector<int32_t>& tokens, int64_t class_id);
  // Everything added since the previous take().
  Verdict take();
  const std::string& classifier_path() const { return classifier_path_; }

 private:
  void flush();

  Context& ctx_;
  Tokenizer& tokenizer_;
  int64_t grid_;
  std::string classifier_path_;
  Classifier classifier_;
  Tensor ids_;
  std::vector<uint32_t> pending_tokens_;
  std::vector<int64_t> pending_classes_;
  Verdict current_;
  int64_t correct_ = 0;
};

}  // namespace vkspec
