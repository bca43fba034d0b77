#pragma once
// Generated token grids to 8-bit images through the tokenizer, a batch at a time.
#include <cstdint>
#include <vector>

#include "engine/image/image.h"
#include "engine/model/tokenizer.h"

namespace vkspec::cli {

class TokenImages {
 public:
  // batch: images per decode call, at most what the tokenizer was loaded for.
  TokenImages(Context& ctx, Tokenizer& tokenizer, int64_t grid, int64_t batch);

  int64_t batch() const { return batch_; }
  // At most batch() grids of grid * grid tokens; the images at the decoder's size, in order.
  std::vector<Image> decode(const std::vector<const std::vector<int32_t>*>& grids);

 private:
  Context& ctx_;
  Tokenizer& tokenizer_;
  int64_t grid_, batch_;
  Tensor ids_;
};

}  // namespace vkspec::cli
