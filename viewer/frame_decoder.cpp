#include "viewer/frame_decoder.h"

#include <algorithm>
#include <cmath>

#include "decoding/step_event.h"
#include "engine/vk/context.h"
#include "common/error.h"

namespace vkspec::viewer {

TokenizerFrameDecoder::TokenizerFrameDecoder(Context& ctx, Tokenizer& tokenizer, int64_t grid_size)
    : ctx_(ctx), tokenizer_(tokenizer), grid_(grid_size), stream_(ctx) {
  const int64_t T = grid_size * grid_size, side = grid_size * tokenizer.downsample();
  ids_ = ctx.tensor(DType::U32, {1, T}, "viewer token grid", MemoryUsage::Upload);
  pixels_ = ctx.tensor(DType::F32, {1, side, side, tokenizer.image_channels()}, "viewer decoded pixels",
                       MemoryUsage::Readback);
  host_.resize(static_cast<size_t>(pixels_.numel()));
}

std::string TokenizerFrameDecoder::description() const { return "VQ decoder " + tokenizer_.path(); }

DecodedImage TokenizerFrameDecoder::decode(const std::vector<int32_t>& grid) {
  if (static_cast<int64_t>(grid.size()) != grid_ * grid_)
    throw Error("viewer: a step's grid has " + std::to_string(grid.size()) + " cells, the decoder expects " +
                std::to_string(grid_ * grid_));
  // Undecided cells decode as token 0; the canvas dims them.
  std::vector<uint32_t> ids(grid.size());
  const int64_t codebook = tokenizer_.codebook_size();
  for (size_t i = 0; i < grid.size(); ++i)
    ids[i] = grid[i] >= 0 && grid[i] < codebook ? static_cast<uint32_t>(grid[i]) : 0u;
  ctx_.upload(ids_, ids.data(), ids.size() * 4);
  const TensorView px = tokenizer_.decode(stream_, ids_, 1, grid_);
  stream_.copy(px, pixels_);
  stream_.submit_and_wait();
  ctx_.download(pixels_, host_.data(), host_.size() * 4);

  DecodedImage im;
  im.height = static_cast<int>(px.shape[1]);
  im.width = static_cast<int>(px.shape[2]);
  const int C = static_cast<int>(px.shape[3]);
  im.rgba.resize(static_cast<size_t>(im.width) * im.height * 4);
  auto to8 = [](float v) {
    const float u = std::clamp((std::isfinite(v) ? v + 1.0f : 1.0f) * 127.5f, 0.0f, 255.0f);
    return static_cast<uint8_t>(std::lround(u));
  };
  for (size_t p = 0; p < static_cast<size_t>(im.width) * im.height; ++p) {
    const float* v = host_.data() + p * static_cast<size_t>(C);
    for (int c = 0; c < 3; ++c) im.rgba[p * 4 + static_cast<size_t>(c)] = to8(v[C >= 3 ? c : 0]);
    im.rgba[p * 4 + 3] = 255;
  }
  return im;
}

DecodedImage PaletteFrameDecoder::decode(const std::vector<int32_t>& grid) {
  if (static_cast<int64_t>(grid.size()) != grid_ * grid_)
    throw Error("viewer: a step's grid has " + std::to_string(grid.size()) + " cells, expected " +
                std::to_string(grid_ * grid_));
  DecodedImage im;
  im.width = im.height = static_cast<int>(grid_);
  im.rgba.resize(grid.size() * 4);
  for (size_t i = 0; i < grid.size(); ++i) {
    uint32_t h = grid[i] == kUndecided ? 0u : static_cast<uint32_t>(grid[i]) * 2654435761u + 0x9e3779b9u;
    h ^= h >> 15;
    for (int c = 0; c < 3; ++c)
      im.rgba[i * 4 + static_cast<size_t>(c)] = static_cast<uint8_t>(64 + ((h >> (8 * c)) & 0xbf));
    im.rgba[i * 4 + 3] = 255;
  }
  return im;
}

}  // namespace vkspec::viewer
