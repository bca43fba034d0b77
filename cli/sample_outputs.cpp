#include "cli/sample_outputs.h"

#include <cstdio>

#include "cli/output_path.h"
#include "common/error.h"
#include "eval/npz_writer.h"

namespace vkspec::cli {
namespace {

std::string png_name(const SampleId& id) {
  char b[64];
  if (id.label >= 0)
    std::snprintf(b, sizeof(b), "seed%06llu_class%lld.png", static_cast<unsigned long long>(id.seed),
                  static_cast<long long>(id.label));
  else
    std::snprintf(b, sizeof(b), "seed%06llu.png", static_cast<unsigned long long>(id.seed));
  return b;
}

SampleOutputs checked(SampleOutputs o) {
  if (!o.npz.empty()) check_output_path(o.npz, "--npz");
  if (!o.out_dir.empty()) make_output_dir(o.out_dir, "--out-dir");
  return o;
}

}  // namespace

frontend::OptionTable sample_output_options(bool per_run) {
  const std::string each = per_run ? "; one file per run, FILE_<run>.npz (<run>: the method and its options)" : "";
  const std::string folder = per_run ? "; one folder per run, DIR/<run>/" : "";
  return {{"--npz", "FILE",
           "the images, tokens and labels as .npz (arr_0 uint8 [N, H, W, 3], as ADM's and LlamaGen's FID scripts "
           "read)" +
               each},
          {"--out-dir", "DIR",
           "one PNG per image at the decoder's size, named by seed and class (seed000007_class3.png); DIR is "
           "created" +
               folder}};
}

SampleOutputs sample_outputs(const frontend::ArgParser& ap) {
  return checked({ap.get_or("--npz", ""), ap.get_or("--out-dir", "")});
}

SampleOutputs run_outputs(const SampleOutputs& all, const std::string& run) {
  SampleOutputs o;
  if (!all.npz.empty()) {
    const std::string& f = all.npz;
    const bool dotted = f.size() > 4 && f.compare(f.size() - 4, 4, ".npz") == 0;
    o.npz = (dotted ? f.substr(0, f.size() - 4) : f) + "_" + run + ".npz";
  }
  if (!all.out_dir.empty()) o.out_dir = all.out_dir + "/" + run;
  return checked(o);
}

SampleWriter::SampleWriter(SampleOutputs where, int64_t images, int64_t tokens_per_image)
    : where_(std::move(where)), images_(images), tokens_per_image_(tokens_per_image) {
  if (!where_.npz.empty()) npz_ = std::make_unique<NpzWriter>(where_.npz);
}

SampleWriter::~SampleWriter() = default;

void SampleWriter::write_npz_image(const Image& image) {
  if (added_ == 0) {
    first_width_ = image.width;
    first_height_ = image.height;
    npz_->begin_array("arr_0", NpyType::U8, {images_, image.height, image.width, 3});
  }
  if (image.width != first_width_ || image.height != first_height_)
    throw Error(where_.npz + ": images of different sizes cannot share arr_0");
  if (image.channels == 3) return npz_->write(image.pixels.data(), image.pixels.size());
  if (image.channels != 1) throw Error(where_.npz + ": images with " + std::to_string(image.channels) + " channels");
  std::vector<uint8_t> rgb;
  rgb.reserve(image.pixels.size() * 3);
  for (uint8_t v : image.pixels) rgb.insert(rgb.end(), 3, v);
  npz_->write(rgb.data(), rgb.size());
}

void SampleWriter::add(const Image& image, const SampleId& id) {
  if (added_ == images_) throw Error("sample outputs: more images than the " + std::to_string(images_) + " announced");
  if (static_cast<int64_t>(id.tokens->size()) != tokens_per_image_)
    throw Error("sample outputs: an image of " + std::to_string(id.tokens->size()) + " tokens");
  if (npz_) write_npz_image(image);
  if (!where_.out_dir.empty()) image.write_png(where_.out_dir + "/" + png_name(id));
  tokens_.insert(tokens_.end(), id.tokens->begin(), id.tokens->end());
  labels_.push_back(static_cast<int32_t>(id.label));
  ++added_;
}

void SampleWriter::finish() {
  if (added_ != images_)
    throw Error("sample outputs: " + std::to_string(added_) + " images of " + std::to_string(images_) + " written");
  if (!npz_) return;
  if (images_ == 0) npz_->begin_array("arr_0", NpyType::U8, {0, 0, 0, 3});
  npz_->end_array();
  npz_->add_array("tokens", NpyType::I32, {images_, tokens_per_image_}, tokens_.data());
  npz_->add_array("labels", NpyType::I32, {images_}, labels_.data());
  npz_->close();
}

void write_samples(const SampleOutputs& where, TokenImages& decoder, const std::vector<SampleId>& samples,
                   int64_t tokens_per_image, const std::function<void(const Image&)>& also) {
  SampleWriter writer(where, static_cast<int64_t>(samples.size()), tokens_per_image);
  for (size_t first = 0; first < samples.size(); first += static_cast<size_t>(decoder.batch())) {
    const size_t end = std::min(samples.size(), first + static_cast<size_t>(decoder.batch()));
    std::vector<const std::vector<int32_t>*> grids;
    for (size_t i = first; i < end; ++i) grids.push_back(samples[i].tokens);
    const std::vector<Image> images = decoder.decode(grids);
    for (size_t i = first; i < end; ++i) {
      writer.add(images[i - first], samples[i]);
      if (also) also(images[i - first]);
    }
  }
  writer.finish();
}

}  // namespace vkspec::cli
