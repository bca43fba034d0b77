#include "engine/model/image_head.h"

#include "engine/model/weights.h"

namespace vkspec {
namespace {

class OutputMatrixHead final : public ImageHead {
 public:
  OutputMatrixHead(Tensor output, int64_t params) : output_(std::move(output)), params_(params) {}
  void record(CommandStream& s, const TensorView& xn, const TensorView& logits,
              const ops::MatmulFusion& per_image) const override {
    ops::matmul_fused(s, xn, output_, logits, per_image);
  }
  int64_t params() const override { return params_; }

 private:
  Tensor output_;  // [vocab, dim]
  int64_t params_;
};

}  // namespace

std::unique_ptr<ImageHead> make_output_matrix_head(WeightStore& w, const GptConfig& cfg, DType weights,
                                                   const std::string& prefix) {
  const int64_t D = cfg.dim, V = cfg.vocab_size;
  const std::string from = "dim=" + std::to_string(D) + ", vocab_size=" + std::to_string(V);
  return std::make_unique<OutputMatrixHead>(w.load(prefix + "output.weight", {V, D}, weights, from), V * D);
}

}  // namespace vkspec
