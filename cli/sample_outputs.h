#pragma once
// --npz FILE and --out-dir DIR of generate and bench: the images in the layout evaluation suites
// read. The .npz holds arr_0 (uint8 [N, H, W, 3], grey images repeated over 3 channels, as the ADM
// evaluation suite of guided-diffusion and LlamaGen expect), tokens (int32 [N, tokens per image])
// and labels (int32 [N], the class, -1 for a caption); the folder one PNG per image at the
// decoder's size and channels, named by seed and class: seed000007_class3.png (seed000007.png
// for a caption).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli/token_images.h"
#include "frontend/arg_parser.h"

namespace vkspec {
class NpzWriter;
}

namespace vkspec::cli {

struct SampleOutputs {
  std::string npz, out_dir;  // "" when not asked for
  bool any() const { return !npz.empty() || !out_dir.empty(); }
};

// per_run: bench's, one file and one folder per run (run_outputs()).
frontend::OptionTable sample_output_options(bool per_run);
// Reads --npz and --out-dir; checks the file's folder and makes the folder (before any work, so
// that a typo fails in a second), throwing Error naming the option.
SampleOutputs sample_outputs(const frontend::ArgParser& ap);
// One bench run's outputs beside the others': FILE with "_<run>" before ".npz" and DIR/<run>/,
// checked and made as sample_outputs() does.
SampleOutputs run_outputs(const SampleOutputs& all, const std::string& run);

// One image's identity.
struct SampleId {
  uint64_t seed = 0;
  int64_t label = 0;  // the class; -1 for a caption
  const std::vector<int32_t>* tokens = nullptr;
};

// Writes images as they come, in the order given; the .npz is complete after finish().
class SampleWriter {
 public:
  SampleWriter(SampleOutputs where, int64_t images, int64_t tokens_per_image);
  ~SampleWriter();

  void add(const Image& image, const SampleId& id);
  void finish();

 private:
  void write_npz_image(const Image& image);

  SampleOutputs where_;
  int64_t images_, tokens_per_image_, added_ = 0;
  std::unique_ptr<NpzWriter> npz_;
  int first_width_ = 0, first_height_ = 0;
  std::vector<int32_t> tokens_, labels_;
};

// Decodes `samples` batch by batch and writes them; `also` sees every image too (generate's grid).
void write_samples(const SampleOutputs& where, TokenImages& decoder, const std::vector<SampleId>& samples,
                   int64_t tokens_per_image, const std::function<void(const Image&)>& also = {});

}  // namespace vkspec::cli
