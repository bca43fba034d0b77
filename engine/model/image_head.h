#pragma once
// A model family's image head: the final normed hidden state to image logits. A family makes its
// head from the weights under a name prefix (ModelFamilyDescriptor::make_head): "" for the GPT's
// own head, "vertical." for FlashAR's vertical head, which is the family's head post-trained beside
// the backbone's. So every model that scores states with a family's head (the GPT, the draft
// heads, latent heads and drafters through Gpt::project, FlashAR's branch) runs one implementation
// of it.
#include <cstdint>
#include <memory>
#include <string>

#include "engine/model/gpt_config.h"
#include "engine/ops/matmul.h"
#include "engine/vk/command_stream.h"

namespace vkspec {

class WeightStore;

class ImageHead {
 public:
  virtual ~ImageHead() = default;
  // Records logits [R, vocab] from the final normed hidden state xn [R, dim], any number of rows
  // (a forward's, or the states draft heads, latent heads and drafters predict); per_image: the
  // kernel choice of one image's rows (batch-invariant bits).
  virtual void record(CommandStream& s, const TensorView& xn, const TensorView& logits,
                      const ops::MatmulFusion& per_image) const = 0;
  // Weights the head streams per forward (what a bandwidth figure counts besides the blocks).
  virtual int64_t params() const = 0;
};

// The head that is one matrix, `prefix` + "output.weight" [vocab, dim]: LlamaGen's untied output,
// Lumina-mGPT's lm_head image rows. Throws Error naming the file and tensor when it is missing or
// of another shape.
std::unique_ptr<ImageHead> make_output_matrix_head(WeightStore& w, const GptConfig& cfg, DType weights,
                                                   const std::string& prefix);

}  // namespace vkspec
