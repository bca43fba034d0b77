#include "decoding/upsampler.h"

#include "decoding/strategy.h"
#include "common/error.h"
#include "engine/model/latent_upsampler.h"
#include "engine/model/sr_net.h"

namespace vkspec {
namespace {

class NearestUpsampler final : public DraftUpsampler {
 public:
  explicit NearestUpsampler(PixelResampler& r) : r_(r) {}
  void record_up(CommandStream& s, const TensorView& low, const TensorView& high) override {
    r_.record_up(s, low, high);
  }

 private:
  PixelResampler& r_;
};

class PixelSrUpsampler final : public DraftUpsampler {
 public:
  PixelSrUpsampler(Context& ctx, Tokenizer& tokenizer, SrNet& net, int64_t low_grid)
      : tokenizer_(tokenizer), net_(net), low_(low_grid), ds_(tokenizer.downsample()) {
    const int64_t big = net.scale() * low_grid * ds_;
    big_px_ = ctx.tensor(DType::F32, {1, big, big, 1}, "mulo super-resolved pixels");
  }
  void record_up(CommandStream& s, const TensorView& low, const TensorView& high) override {
    net_.record(s, tokenizer_.decode(s, low, 1, low_), big_px_.view());
    const int64_t big = net_.scale() * low_ * ds_, hi = net_.scale() * low_;
    const TensorView ids = tokenizer_.encode(s, big_px_.view(), 1, big, big);
    s.copy(ids.reshape({hi * hi}), high);
  }

 private:
  Tokenizer& tokenizer_;
  SrNet& net_;
  int64_t low_, ds_;
  Tensor big_px_;
};

class LatentDraftUpsampler final : public DraftUpsampler {
 public:
  LatentDraftUpsampler(LatentUpsampler& net, int64_t low_grid) : net_(net), low_(low_grid) {}
  void record_up(CommandStream& s, const TensorView& low, const TensorView& high) override {
    net_.record(s, low, high, 1, low_);
  }

 private:
  LatentUpsampler& net_;
  int64_t low_;
};

}  // namespace

UpsamplerKind upsampler_kind(const std::string& name) {
  if (name == "nearest") return UpsamplerKind::Nearest;
  if (name == "pixel-sr") return UpsamplerKind::PixelSr;
  if (name == "latent") return UpsamplerKind::Latent;
  throw Error("mulo: --upsampler " + name + " (nearest, pixel-sr or latent)");
}

std::unique_ptr<DraftUpsampler> make_draft_upsampler(UpsamplerKind kind, const ModelSet& m, PixelResampler& resampler,
                                                     int64_t low_grid, int64_t high_grid) {
  const int64_t r = high_grid / low_grid;
  switch (kind) {
    case UpsamplerKind::Nearest: return std::make_unique<NearestUpsampler>(resampler);
    case UpsamplerKind::PixelSr:
      if (!m.sr_net)
        throw Error("mulo: --upsampler pixel-sr needs the super-resolution net (--sr-net FILE, tools/train_sr_net.py)");
      if (m.sr_net->scale() != r)
        throw Error("mulo: the super-resolution net " + m.sr_net->path() + " upsamples x" +
                    std::to_string(m.sr_net->scale()) + ", the low-resolution model is " + std::to_string(r) +
                    "x coarser than the target (pass --sr-net with the x" + std::to_string(r) + " net)");
      if (m.tokenizer->image_channels() != 1)
        throw Error("mulo: --upsampler pixel-sr runs on single-channel images; " + m.tokenizer->path() + " decodes " +
                    std::to_string(m.tokenizer->image_channels()));
      return std::make_unique<PixelSrUpsampler>(*m.ctx, *m.tokenizer, *m.sr_net, low_grid);
    case UpsamplerKind::Latent:
      if (!m.latent_upsampler)
        throw Error("mulo: --upsampler latent needs the latent upsampler (--latent-upsampler FILE, "
                    "tools/train_latent_upsampler.py)");
      if (m.latent_upsampler->ratio() != r)
        throw Error("mulo: the latent upsampler " + m.latent_upsampler->path() + " has ratio " +
                    std::to_string(m.latent_upsampler->ratio()) + ", the low-resolution model is " + std::to_string(r) +
                    "x coarser than the target (pass --latent-upsampler with the r = " + std::to_string(r) + " one)");
      return std::make_unique<LatentDraftUpsampler>(*m.latent_upsampler, low_grid);
  }
  throw Error("mulo: unknown upsampler");
}

}  // namespace vkspec
