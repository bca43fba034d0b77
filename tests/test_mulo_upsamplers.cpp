// MuLo-SD's trained upsamplers on the engine against the PyTorch reference (tools/reference.py,
// tools/vkspec_models.py SRNet / LatentUpsampler) on small random nets: the super-resolution net's
// pixels (x2 and x4), the latent upsampler's latents and quantised ids; the latent upsampler's
// row causality (rows below never change the rows above) and its load-time checks.
#include <gtest/gtest.h>

#include "common/error.h"
#include "engine/checks/op_check.h"
#include "engine/model/latent_upsampler.h"
#include "engine/model/safetensors_writer.h"
#include "engine/model/sr_net.h"
#include "engine/model/vq_model.h"
#include "tests/support/python_reference.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

class MuloUpsamplers : public testing::VulkanTest {};

// NCHW <-> NHWC for one channel is the same memory; the images here are single-channel.
TEST_F(MuloUpsamplers, SrNetMatchesPyTorch) {
  for (int scale : {2, 4}) {
    const std::string dir = testing::scratch_dir("mulo_sr_" + std::to_string(scale));
    auto r = testing::run_reference({"make-sr", dir + "/sr.safetensors", "--scale", std::to_string(scale), "--ch", "8",
                                     "--depth", "3", "--seed", std::to_string(scale)});
    if (r.skipped) GTEST_SKIP() << r.message;
    ASSERT_TRUE(r.ok) << r.message;
    const int64_t n = 2, h = 6, w = 5;
    const std::vector<float> x = random_floats(static_cast<size_t>(n * h * w), 17);
    SafetensorsWriter px;
    px.add_f32("pixels", {n, 1, h, w}, x);
    px.write(dir + "/px.safetensors");
    r = testing::run_reference({"sr", dir + "/sr.safetensors", "--pixels", dir + "/px.safetensors", "--out",
                                dir + "/out.safetensors"});
    ASSERT_TRUE(r.ok) << r.message;
    const std::vector<float> want = SafetensorsFile(dir + "/out.safetensors").read_f32("pixels");

    SrNet net(ctx(), dir + "/sr.safetensors", 8, n);
    EXPECT_EQ(net.scale(), scale);
    Tensor tx = upload_floats(ctx(), x, DType::F32, {n, h, w, 1}, "x");
    Tensor ty = ctx().tensor(DType::F32, {n, scale * h, scale * w, 1}, "y");
    CommandStream s(ctx());
    net.record(s, tx, ty);
    s.submit_and_wait();
    const double e = normalised_error(download_floats(ctx(), ty), want);
    EXPECT_LE(e * e, 1e-8) << "x" << scale << " NMSE";
    // Wrong sizes are errors naming the net, not wrong pixels.
    Tensor too_big = ctx().tensor(DType::F32, {1, 9, 9, 1}, "too big");
    Tensor out_big = ctx().tensor(DType::F32, {1, 9 * scale, 9 * scale, 1}, "out");
    EXPECT_THROW(net.record(s, too_big, out_big), Error);
  }
}

struct LatentCase {
  std::string dir;
  std::unique_ptr<VqModel> vq;
  std::unique_ptr<LatentUpsampler> up;
};

LatentCase make_latent_case(Context& ctx, int ratio, bool* skipped) {
  LatentCase c;
  c.dir = testing::scratch_dir("mulo_latent_up_" + std::to_string(ratio));
  auto r = testing::run_reference({"make-vq", c.dir + "/vq.safetensors", "--codebook", "16", "--embed", "4"});
  *skipped = r.skipped;
  if (r.skipped) return c;
  EXPECT_TRUE(r.ok) << r.message;
  r = testing::run_reference({"make-latent-up", c.dir + "/up.safetensors", "--vocab", "16", "--embed", "4", "--ratio",
                              std::to_string(ratio), "--ch", "8", "--depth", "2", "--seed", std::to_string(ratio)});
  EXPECT_TRUE(r.ok) << r.message;
  c.vq = std::make_unique<VqModel>(ctx, c.dir + "/vq.safetensors", DType::F32, 1, 16);
  c.up = std::make_unique<LatentUpsampler>(ctx, c.dir + "/up.safetensors", *c.vq, 4);
  return c;
}

std::vector<float> latents_of(Context& ctx, LatentUpsampler& up, const std::vector<uint32_t>& ids, int64_t w,
                              std::vector<uint32_t>* high = nullptr) {
  Tensor low = ctx.tensor(DType::U32, {w * w}, "low");
  ctx.upload(low, ids.data(), ids.size() * 4);
  const int64_t W = up.ratio() * w;
  Tensor z = ctx.tensor(DType::F32, {1, W, W, 4}, "latents");
  Tensor hi = ctx.tensor(DType::U32, {W * W}, "high");
  CommandStream s(ctx);
  s.copy(up.record_latents(s, low, 1, w), z);
  up.record(s, low, hi, 1, w);
  s.submit_and_wait();
  if (high) {
    high->resize(static_cast<size_t>(W * W));
    ctx.download(hi, high->data(), high->size() * 4);
  }
  return download_floats(ctx, z);
}

TEST_F(MuloUpsamplers, LatentUpsamplerMatchesPyTorch) {
  for (int ratio : {2, 4}) {
    bool skipped = false;
    LatentCase c = make_latent_case(ctx(), ratio, &skipped);
    if (skipped) GTEST_SKIP() << "PyTorch missing";
    ASSERT_TRUE(c.up);
    EXPECT_EQ(c.up->ratio(), ratio);
    const int64_t w = 3, W = ratio * w, e = 4;
    std::vector<uint32_t> ids;
    std::string list;
    for (int i = 0; i < w * w; ++i) {
      ids.push_back(static_cast<uint32_t>((i * 7 + 3) % 16));
      list += (i ? "," : "") + std::to_string(ids.back());
    }
    auto r =
        testing::run_reference({"latent-up", c.dir + "/up.safetensors", "--vq", c.dir + "/vq.safetensors", "--tokens",
                                list, "--grid", std::to_string(w), "--out", c.dir + "/out.safetensors"});
    ASSERT_TRUE(r.ok) << r.message;
    SafetensorsFile ref(c.dir + "/out.safetensors");
    const std::vector<float> want_nchw = ref.read_f32("latents");
    const int32_t* want_ids = reinterpret_cast<const int32_t*>(ref.data("ids"));
    std::vector<uint32_t> got_ids;
    const std::vector<float> got = latents_of(ctx(), *c.up, ids, w, &got_ids);
    std::vector<float> want(got.size());
    for (int64_t y = 0; y < W; ++y)
      for (int64_t x = 0; x < W; ++x)
        for (int64_t ch = 0; ch < e; ++ch)
          want[static_cast<size_t>((y * W + x) * e + ch)] = want_nchw[static_cast<size_t>((ch * W + y) * W + x)];
    const double err = normalised_error(got, want);
    EXPECT_LE(err * err, 1e-8) << "r " << ratio << " latents NMSE";
    int mismatches = 0;
    for (int64_t i = 0; i < W * W; ++i)
      mismatches += got_ids[static_cast<size_t>(i)] != static_cast<uint32_t>(want_ids[i]);
    EXPECT_EQ(mismatches, 0) << "r " << ratio << ": ids differ from PyTorch's nearest code";
  }
}

TEST_F(MuloUpsamplers, LatentUpsamplerIsRowCausal) {
  bool skipped = false;
  LatentCase c = make_latent_case(ctx(), 2, &skipped);
  if (skipped) GTEST_SKIP() << "PyTorch missing";
  const int64_t w = 4, W = 8, e = 4;
  std::vector<uint32_t> a(static_cast<size_t>(w * w)), b;
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint32_t>((i * 5 + 1) % 16);
  for (int64_t row = 0; row + 1 < w; ++row) {
    b = a;
    for (int64_t i = (row + 1) * w; i < w * w; ++i) b[static_cast<size_t>(i)] = (a[static_cast<size_t>(i)] + 3) % 16;
    const std::vector<float> za = latents_of(ctx(), *c.up, a, w), zb = latents_of(ctx(), *c.up, b, w);
    const size_t above = static_cast<size_t>(2 * (row + 1) * W * e);  // high rows 0 .. 2 row + 1
    EXPECT_TRUE(std::equal(za.begin(), za.begin() + static_cast<std::ptrdiff_t>(above), zb.begin()))
        << "low rows below " << row << " changed high rows above " << 2 * (row + 1);
    EXPECT_FALSE(std::equal(za.begin(), za.end(), zb.begin())) << "the rows below must matter below";
  }
}

TEST_F(MuloUpsamplers, LatentUpsamplerChecksItsFile) {
  bool skipped = false;
  LatentCase c = make_latent_case(ctx(), 2, &skipped);
  if (skipped) GTEST_SKIP() << "PyTorch missing";
  // A tap on the row below: not row-causal.
  SafetensorsFile f(c.dir + "/up.safetensors");
  SafetensorsWriter w;
  for (const auto& [k, v] : f.metadata()) w.set_metadata(k, v);
  for (const std::string& name : f.tensor_names()) {
    std::vector<float> t = f.read_f32(name);
    if (name == "convs.1.weight") t[7] = 0.5f;  // filter 0, input 0, row 2, column 1
    const auto& info = f.info(name);
    w.add_f32(name, info.shape, t);
  }
  w.write(c.dir + "/unmasked.safetensors");
  try {
    LatentUpsampler bad(ctx(), c.dir + "/unmasked.safetensors", *c.vq, 4);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not row-causal"), std::string::npos) << e.what();
  }
  // Another codebook than the tokenizer's.
  auto r = testing::run_reference({"make-vq", c.dir + "/vq32.safetensors", "--codebook", "32", "--embed", "4"});
  ASSERT_TRUE(r.ok) << r.message;
  VqModel other(ctx(), c.dir + "/vq32.safetensors", DType::F32, 1, 8);
  EXPECT_THROW(LatentUpsampler(ctx(), c.dir + "/up.safetensors", other, 4), Error);
  // Not a latent upsampler at all.
  EXPECT_THROW(LatentUpsampler(ctx(), c.dir + "/vq.safetensors", *c.vq, 4), Error);
  EXPECT_THROW(SrNet(ctx(), c.dir + "/up.safetensors", 8), Error);
}

}  // namespace
}  // namespace vkspec
