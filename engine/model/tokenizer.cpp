#include "engine/model/tokenizer.h"

#include "engine/model/vq_model.h"

namespace vkspec {

std::unique_ptr<Tokenizer> load_tokenizer(Context& ctx, const std::string& path, DType weights, int64_t max_images,
                                          int64_t max_grid) {
  return std::make_unique<VqModel>(ctx, path, weights, max_images, max_grid);
}

}  // namespace vkspec
