#include "engine/image/image.h"

#include <algorithm>
#include <cmath>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "common/error.h"

namespace vkspec {

Image Image::from_unit_range(const float* values, int width, int height, int channels) {
  Image im;
  im.width = width;
  im.height = height;
  im.channels = channels;
  im.pixels.resize(static_cast<size_t>(width) * height * channels);
  for (size_t i = 0; i < im.pixels.size(); ++i) {
    const float v = std::isfinite(values[i]) ? values[i] : 0.0f;
    // LlamaGen: (x + 1) / 2 * 255, clamped, rounded.
    const float u = std::clamp((v + 1.0f) * 127.5f, 0.0f, 255.0f);
    im.pixels[i] = static_cast<uint8_t>(std::lround(u));
  }
  return im;
}

Image Image::scaled(int factor) const {
  if (factor <= 1) return *this;
  Image o;
  o.width = width * factor;
  o.height = height * factor;
  o.channels = channels;
  o.pixels.resize(static_cast<size_t>(o.width) * o.height * channels);
  for (int y = 0; y < o.height; ++y)
    for (int x = 0; x < o.width; ++x)
      for (int c = 0; c < channels; ++c)
        o.pixels[(static_cast<size_t>(y) * o.width + x) * channels + c] =
            pixels[(static_cast<size_t>(y / factor) * width + x / factor) * channels + c];
  return o;
}

void Image::write_png(const std::string& path) const {
  if (width <= 0 || height <= 0 || (channels != 1 && channels != 3 && channels != 4))
    throw Error("write " + path + ": empty image or unsupported channel count");
  if (!stbi_write_png(path.c_str(), width, height, channels, pixels.data(), width * channels))
    throw Error("could not write PNG " + path + " (directory missing or not writable?)");
}

Image make_grid(const std::vector<Image>& images, int columns, int gap) {
  if (images.empty()) throw Error("make_grid: no images");
  const Image& f = images.front();
  for (const Image& im : images)
    if (im.width != f.width || im.height != f.height || im.channels != f.channels)
      throw Error("make_grid: images differ in size");
  columns = std::max(1, std::min<int>(columns, static_cast<int>(images.size())));
  const int rows = static_cast<int>((images.size() + columns - 1) / columns);
  Image g;
  g.width = columns * f.width + (columns - 1) * gap;
  g.height = rows * f.height + (rows - 1) * gap;
  g.channels = f.channels;
  g.pixels.assign(static_cast<size_t>(g.width) * g.height * g.channels, 255);
  for (size_t i = 0; i < images.size(); ++i) {
    const int ox = static_cast<int>(i % columns) * (f.width + gap),
              oy = static_cast<int>(i / columns) * (f.height + gap);
    for (int y = 0; y < f.height; ++y)
      std::copy_n(images[i].pixels.begin() + static_cast<ptrdiff_t>(y) * f.width * f.channels, f.width * f.channels,
                  g.pixels.begin() + (static_cast<ptrdiff_t>(oy + y) * g.width + ox) * g.channels);
  }
  return g;
}

}  // namespace vkspec
