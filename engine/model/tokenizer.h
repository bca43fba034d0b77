#pragma once
// An image tokenizer: what a generated token grid means in pixels. Evaluation decodes with it,
// neighbour tables (LANTERN, MuLo-SD) read its codebook, pixel-space resampling encodes with it.
// LlamaGen's VQ model (vq_model.h) is one; the GPT's vocabulary must be its codebook.
#include <cstdint>
#include <string>

#include "engine/vk/command_stream.h"

namespace vkspec {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Names it in messages (the model file).
  virtual const std::string& path() const = 0;
  virtual int64_t codebook_size() const = 0;
  // Pixels per token side: a grid x grid token image is (grid * downsample())^2 pixels.
  virtual int64_t downsample() const = 0;
  virtual int64_t image_channels() const = 0;  // channels of decoded images
  // The codebook [codebook_size, embed_dim] f32 as stored.
  virtual const Tensor& codebook() const = 0;

  // ids: u32 [n, grid * grid] (raster order). Returns pixels f32 [n, H, W, image_channels()] in
  // about [-1, 1], H = W = grid * downsample(); valid until the next call.
  virtual TensorView decode(CommandStream& s, const TensorView& ids, int64_t n, int64_t grid) = 0;
  // pixels: f32 [n, H, W, input channels] in [-1, 1]. Returns ids u32 [n, (H / ds) * (W / ds)],
  // valid until the next call.
  virtual TensorView encode(CommandStream& s, const TensorView& pixels, int64_t n, int64_t height,
                            int64_t width) = 0;
};

}  // namespace vkspec
