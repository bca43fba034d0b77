#include "cli/token_images.h"

#include "common/error.h"
#include "engine/vk/context.h"

namespace vkspec::cli {

TokenImages::TokenImages(Context& ctx, Tokenizer& tokenizer, int64_t grid, int64_t batch)
    : ctx_(ctx),
      tokenizer_(tokenizer),
      grid_(grid),
      batch_(batch),
      ids_(ctx.tensor(DType::U32, {batch, grid * grid}, "generated ids", MemoryUsage::Upload)) {}

std::vector<Image> TokenImages::decode(const std::vector<const std::vector<int32_t>*>& grids) {
  const int64_t n = static_cast<int64_t>(grids.size());
  if (n == 0) return {};
  if (n > batch_) throw Error("decode: " + std::to_string(n) + " images, the batch is " + std::to_string(batch_));
  std::vector<uint32_t> host;
  for (const std::vector<int32_t>* g : grids) {
    if (static_cast<int64_t>(g->size()) != grid_ * grid_)
      throw Error("decode: " + std::to_string(g->size()) + " tokens for a " + std::to_string(grid_) + "x" +
                  std::to_string(grid_) + " grid");
    for (int32_t t : *g) host.push_back(static_cast<uint32_t>(t));
  }
  ctx_.upload(ids_, 0, host.data(), host.size() * 4);
  CommandStream s(ctx_);
  const TensorView px = tokenizer_.decode(s, ids_, n, grid_);
  Tensor back = ctx_.tensor(DType::F32, px.shape, "decoded pixels", MemoryUsage::Readback);
  s.copy(px, back);
  s.submit_and_wait();
  std::vector<float> v(static_cast<size_t>(back.numel()));
  ctx_.download(back, v.data(), v.size() * 4);
  const int H = static_cast<int>(px.shape[1]), W = static_cast<int>(px.shape[2]), C = static_cast<int>(px.shape[3]);
  std::vector<Image> images;
  for (int64_t i = 0; i < n; ++i) images.push_back(Image::from_unit_range(v.data() + i * H * W * C, W, H, C));
  return images;
}

}  // namespace vkspec::cli
