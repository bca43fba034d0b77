#pragma once
// LlamaGen's VQ tokenizer (tokenizer/tokenizer_image/vq_model.py) on the engine, both directions:
// decode (token ids -> pixels) for every generated image, encode (pixels -> ids) for MuLo-SD's
// upsampler. Channel-last activations [N, H, W, C]; channels, levels, image channels and codebook
// come from the model file, so LlamaGen's VQ-16 and our small tokenizer are the same code.
#include <string>
#include <vector>

#include "engine/model/tokenizer.h"
#include "engine/model/weights.h"
#include "engine/vk/command_stream.h"

namespace vkspec {

struct VqConfig {
  int64_t ch = 128;
  std::vector<int64_t> ch_mult = {1, 1, 2, 2, 4};          // encoder
  std::vector<int64_t> decoder_ch_mult = {1, 1, 2, 2, 4};  // decoder (LlamaGen uses the same)
  int64_t z_channels = 256, codebook_size = 16384, codebook_embed_dim = 8;
  int64_t num_res_blocks = 2, in_channels = 3, out_channels = 3;
  // LlamaGen: codes L2-normalised on lookup (cosine nearest on encode), attention after every
  // res block of the deepest level both ways. Chameleon's VQGAN (taming's): raw codes, attention
  // only in the middle blocks (metadata codebook_l2_norm 0, level_attention 0).
  bool codebook_l2_norm = true, level_attention = true;

  int64_t downsample() const { return int64_t{1} << (ch_mult.size() - 1); }
  static VqConfig from_file(const SafetensorsFile& f);
};

class VqModel final : public Tokenizer {
 public:
  // max_images: most images per decode/encode call; max_grid: the largest token grid side.
  VqModel(Context& ctx, const std::string& path, DType weights = DType::F16, int64_t max_images = 8,
          int64_t max_grid = 16);

  const VqConfig& config() const { return cfg_; }
  const std::string& path() const override { return path_; }
  int64_t codebook_size() const override { return cfg_.codebook_size; }
  int64_t downsample() const override { return cfg_.downsample(); }
  int64_t image_channels() const override { return cfg_.out_channels; }
  int64_t input_channels() const override { return cfg_.in_channels; }
  // Raw rows as stored (the lookup L2-normalises them when codebook_l2_norm is set; encode needs
  // it set: the engine's nearest-code search is the cosine one).
  const Tensor& codebook() const override { return codebook_; }

  // See Tokenizer.
  TensorView decode(CommandStream& s, const TensorView& ids, int64_t n, int64_t grid) override;
  TensorView encode(CommandStream& s, const TensorView& pixels, int64_t n, int64_t height, int64_t width) override;

 private:
  struct Conv {
    Tensor w, b;
  };
  struct Norm {
    Tensor gamma, beta;
  };
  struct Res {
    Norm norm1, norm2;
    Conv conv1, conv2, nin;  // nin only when channels change
    int64_t cin = 0, cout = 0;
  };
  struct Attn {
    Norm norm;
    Conv q, k, v, proj;
    int64_t c = 0;
  };
  struct Level {
    std::vector<Res> res;
    std::vector<Attn> attn;
    Conv resample;  // encoder downsample / decoder upsample conv (absent at the last level)
  };
  struct Half {  // encoder or decoder
    Conv conv_in, conv_out;
    std::vector<Level> levels;
    Res mid0, mid2;
    Attn mid1;
    Norm norm_out;
  };
  // Activation of n images at h x w with c channels in pool buffer `slot`.
  struct Act {
    int slot;
    int64_t h, w, c;
  };

  Conv load_conv(WeightStore& ws, const std::string& name, int64_t cout, int64_t cin, int64_t k);
  Norm load_norm(WeightStore& ws, const std::string& name, int64_t c);
  Res load_res(WeightStore& ws, const std::string& name, int64_t cin, int64_t cout);
  Attn load_attn(WeightStore& ws, const std::string& name, int64_t c);
  // The encoder for images of top x top pixels, and the decoder for grids of g x g tokens: each
  // returns the most floats one image's activation takes on its way.
  int64_t load_encoder(WeightStore& ws, int64_t top);
  int64_t load_decoder(WeightStore& ws, int64_t g);
  TensorView view(const Act& a) const;
  int free_slot(std::initializer_list<int> busy) const;
  Act conv(CommandStream& s, const Act& x, const Conv& c, int64_t cout, int64_t k, int out_slot);
  Act res_block(CommandStream& s, const Act& x, const Res& r);
  Act attn_block(CommandStream& s, const Act& x, const Attn& a);
  Act mid(CommandStream& s, Act x, const Half& h);
  Act tail(CommandStream& s, const Act& x, const Half& h, int64_t cout);

  Context& ctx_;
  std::string path_;
  VqConfig cfg_;
  DType wt_;
  int64_t max_images_, max_grid_;
  int64_t n_ = 0;  // images in the current call
  Half enc_, dec_;
  Conv quant_conv_, post_quant_conv_;
  Tensor codebook_;
  std::vector<Tensor> pool_;
  Tensor ids_;
};

}  // namespace vkspec
