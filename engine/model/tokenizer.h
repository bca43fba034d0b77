#pragma once
// An image tokenizer: what a generated token grid means in pixels. Evaluation decodes with it,
// neighbour tables (LANTERN, MuLo-SD) read its codebook, pixel-space resampling encodes with it.
// LlamaGen's VQ model (vq_model.h) is one; the GPT's vocabulary must be its codebook.
#include <cstdint>
#include <memory>
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
  // Channels encode() takes; may differ from image_channels(), and re-encoding decoded pixels
  // (MuLo-SD's resampling) needs them equal.
  virtual int64_t input_channels() const = 0;
  // The codebook [codebook_size, embed_dim] f32 as stored.
  virtual const Tensor& codebook() const = 0;

  // ids: u32 [n, grid * grid] (raster order). Returns pixels f32 [n, H, W, image_channels()] in
  // about [-1, 1], H = W = grid * downsample(); valid until the next call.
  virtual TensorView decode(CommandStream& s, const TensorView& ids, int64_t n, int64_t grid) = 0;
  // pixels: f32 [n, H, W, input_channels()] in [-1, 1]. Returns ids u32 [n, (H / ds) * (W / ds)],
  // valid until the next call.
  virtual TensorView encode(CommandStream& s, const TensorView& pixels, int64_t n, int64_t height, int64_t width) = 0;
};

// The tokenizer in a model file, sized for at most max_images images per call and token grids
// up to max_grid on a side. The one place that picks an implementation for a file: every
// tokenizer file so far is LlamaGen's VQ (errors name the file, e.g. a GPT given as one).
std::unique_ptr<Tokenizer> load_tokenizer(Context& ctx, const std::string& path, DType weights, int64_t max_images,
                                          int64_t max_grid);

}  // namespace vkspec
