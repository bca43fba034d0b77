#pragma once
// 8-bit images on the host: VQ-decoder output ([-1, 1] floats, channel-last) to pixels, grids of
// samples, PNG files.
#include <cstdint>
#include <string>
#include <vector>

namespace vkspec {

struct Image {
  int width = 0, height = 0, channels = 0;  // channels 1 (grey) or 3 (RGB)
  std::vector<uint8_t> pixels;              // row-major, channel-last

  // values: [height, width, channels] in [-1, 1] (clamped), as LlamaGen's decoder emits.
  static Image from_unit_range(const float* values, int width, int height, int channels);
  // Nearest-neighbour upscale by an integer factor (crisp pixels for small samples).
  Image scaled(int factor) const;
  // Throws Error naming the path when the file cannot be written.
  void write_png(const std::string& path) const;
};

// Tiles equally sized images into a grid `columns` wide with `gap` pixels of white between them.
Image make_grid(const std::vector<Image>& images, int columns, int gap = 2);

}  // namespace vkspec
