// The engine's VQ tokenizer against our PyTorch references (tools/reference.py) on small random
// models: LlamaGen's VQ (decoded pixels, NMSE <= 1e-5 in f32, and encoded ids) and Chameleon's
// VQGAN in its released files through tools/convert_lumina.py (decoded pixels; encode refused).
#include <gtest/gtest.h>

#include "common/error.h"
#include "engine/checks/op_check.h"
#include "engine/model/safetensors_writer.h"
#include "engine/model/vq_model.h"
#include "tests/support/python_reference.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

struct VqCase {
  const char* name;
  const char* ch_mult;
  int ch, z, codebook, embed, in_ch, res_blocks, grid;
};

// Test names print the case name, not the struct bytes.
void PrintTo(const VqCase& c, std::ostream* os) { *os << c.name; }

// The engine's decode of ids (one image, grid x grid) as NCHW pixels, the references' layout.
std::vector<float> decode_nchw(Context& ctx, Tokenizer& vq, const std::vector<uint32_t>& ids, int64_t grid) {
  const int64_t H = grid * vq.downsample(), C = vq.image_channels();
  Tensor tid = ctx.tensor(DType::U32, {1, grid * grid}, "ids");
  ctx.upload(tid, ids.data(), ids.size() * 4);
  CommandStream s(ctx);
  const TensorView px = vq.decode(s, tid, 1, grid);
  Tensor out = ctx.tensor(DType::F32, px.shape, "pixels");
  s.copy(px, out);
  s.submit_and_wait();
  const std::vector<float> nhwc = download_floats(ctx, out);
  std::vector<float> nchw(nhwc.size());
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < H; ++x)
      for (int64_t ch = 0; ch < C; ++ch) nchw[(ch * H + y) * H + x] = nhwc[(y * H + x) * C + ch];
  return nchw;
}

class VqParityTest : public testing::VulkanTest, public ::testing::WithParamInterface<VqCase> {};

TEST_P(VqParityTest, DecodeAndEncodeMatchPyTorchReference) {
  const VqCase c = GetParam();
  const std::string dir = testing::scratch_dir(std::string("vq_parity_") + c.name);
  const std::string model = dir + "/vq.safetensors";
  auto r = testing::run_reference({"make-vq", model, "--ch", std::to_string(c.ch), "--ch-mult", c.ch_mult, "--z",
                                   std::to_string(c.z), "--codebook", std::to_string(c.codebook), "--embed",
                                   std::to_string(c.embed), "--in-ch", std::to_string(c.in_ch), "--res-blocks",
                                   std::to_string(c.res_blocks)});
  if (r.skipped) GTEST_SKIP() << r.message;
  ASSERT_TRUE(r.ok) << r.message;
  const int n_tok = c.grid * c.grid;
  std::vector<uint32_t> ids;
  std::string list;
  for (int i = 0; i < n_tok; ++i) {
    ids.push_back(static_cast<uint32_t>((i * 5 + 1) % c.codebook));
    list += (i ? "," : "") + std::to_string(ids.back());
  }
  r = testing::run_reference({"vq-decode", model, "--tokens", list, "--grid", std::to_string(c.grid), "--out",
                              dir + "/pixels.safetensors"});
  ASSERT_TRUE(r.ok) << r.message;
  SafetensorsFile ref(dir + "/pixels.safetensors");
  const std::vector<float> want_nchw = ref.read_f32("pixels");  // [1, C, H, W]

  VqModel vq_model(ctx(), model, DType::F32, 2, c.grid);
  Tokenizer& vq = vq_model;  // through the interface evaluation and neighbour tables use
  const int64_t H = c.grid * vq.downsample(), C = c.in_ch;
  EXPECT_EQ(vq.image_channels(), C);
  EXPECT_EQ(vq.input_channels(), C);
  EXPECT_EQ(vq.codebook().shape()[0], vq.codebook_size());
  const std::vector<float> got = decode_nchw(ctx(), vq, ids, c.grid);
  const double e = normalised_error(got, want_nchw);
  EXPECT_LE(e * e, 1e-5) << "decode NMSE";

  // Encode the reference's decoded image back: ids must match PyTorch's argmin exactly.
  SafetensorsWriter w;
  w.add_f32("pixels", {1, C, H, H}, want_nchw);
  w.write(dir + "/decoded.safetensors");
  r = testing::run_reference({"vq-encode", model, "--pixels", dir + "/decoded.safetensors", "--out",
                              dir + "/ids.safetensors"});
  ASSERT_TRUE(r.ok) << r.message;
  SafetensorsFile ref_ids(dir + "/ids.safetensors");
  const int32_t* want_ids = reinterpret_cast<const int32_t*>(ref_ids.data("ids"));
  std::vector<float> nhwc(want_nchw.size());
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < H; ++x)
      for (int64_t ch = 0; ch < C; ++ch) nhwc[(y * H + x) * C + ch] = want_nchw[(ch * H + y) * H + x];
  Tensor img = upload_floats(ctx(), nhwc, DType::F32, {1, H, H, C}, "image");
  CommandStream s(ctx());
  const TensorView enc = vq.encode(s, img, 1, H, H);
  Tensor enc_copy = ctx().tensor(DType::U32, enc.shape, "ids copy");
  s.copy(enc, enc_copy);
  s.submit_and_wait();
  std::vector<uint32_t> got_ids(static_cast<size_t>(n_tok));
  ctx().download(enc_copy, got_ids.data(), got_ids.size() * 4);
  int mismatches = 0;
  for (int i = 0; i < n_tok; ++i) mismatches += got_ids[static_cast<size_t>(i)] != static_cast<uint32_t>(want_ids[i]);
  // Near-ties between codes may round either way in f32; a handful is tolerated, a bug is not.
  EXPECT_LE(mismatches, n_tok / 32) << mismatches << " of " << n_tok << " ids differ";
}

// Chameleon's VQGAN (Lumina-mGPT's tokenizer): vqgan.yaml + vqgan.ckpt as released, converted.
struct ChameleonCase {
  const char* name;
  const char* ch_mult;
  int ch, z, codebook, embed, res_blocks, grid;
};
void PrintTo(const ChameleonCase& c, std::ostream* os) { *os << c.name; }

class ChameleonVqParityTest : public testing::VulkanTest, public ::testing::WithParamInterface<ChameleonCase> {};

TEST_P(ChameleonVqParityTest, DecodeMatchesPyTorchReference) {
  const ChameleonCase c = GetParam();
  const std::string dir = testing::scratch_dir(std::string("chameleon_vq_") + c.name);
  auto r = testing::run_reference({"make-chameleon-vq", dir + "/released", "--ch", std::to_string(c.ch), "--ch-mult",
                                   c.ch_mult, "--z", std::to_string(c.z), "--codebook", std::to_string(c.codebook),
                                   "--embed", std::to_string(c.embed), "--res-blocks", std::to_string(c.res_blocks)});
  if (r.skipped) GTEST_SKIP() << r.message;
  ASSERT_TRUE(r.ok) << r.message;
  r = testing::run_tool("convert_lumina.py", {"--vqgan", dir + "/released", dir + "/vq"});
  ASSERT_TRUE(r.ok) << r.message;
  const int n_tok = c.grid * c.grid;
  std::vector<uint32_t> ids;
  std::string list;
  for (int i = 0; i < n_tok; ++i) {
    ids.push_back(static_cast<uint32_t>((i * 37 + 5) % c.codebook));
    list += (i ? "," : "") + std::to_string(ids.back());
  }
  r = testing::run_reference({"chameleon-vq-decode", dir + "/released", "--tokens", list, "--grid",
                              std::to_string(c.grid), "--out", dir + "/pixels.safetensors"});
  ASSERT_TRUE(r.ok) << r.message;
  const std::vector<float> want_nchw = SafetensorsFile(dir + "/pixels.safetensors").read_f32("pixels");

  VqModel vq(ctx(), dir + "/vq.safetensors", DType::F32, 1, c.grid);
  EXPECT_FALSE(vq.config().codebook_l2_norm);
  EXPECT_FALSE(vq.config().level_attention);
  const int64_t H = c.grid * vq.downsample(), C = 3;
  const std::vector<float> got = decode_nchw(ctx(), vq, ids, c.grid);
  ASSERT_EQ(got.size(), want_nchw.size());
  const double e = normalised_error(got, want_nchw);
  EXPECT_LE(e * e, 1e-5) << "decode NMSE";

  // Its codes are raw, so the engine's cosine nearest-code search does not apply: refused.
  Tensor img = ctx().tensor(DType::F32, {1, H, H, C}, "image");
  CommandStream s(ctx());
  try {
    vq.encode(s, img, 1, H, H);
    ADD_FAILURE() << "encoded with an unnormalised codebook";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("decodes only"), std::string::npos) << err.what();
  }
}

// The released architecture (five levels 1,1,2,2,4, two res blocks, z and codes 256 wide) at a
// narrower width, and a small two-level one.
INSTANTIATE_TEST_SUITE_P(Released, ChameleonVqParityTest,
                         ::testing::Values(ChameleonCase{"small_2lv", "1,2", 32, 32, 64, 32, 1, 3},
                                           ChameleonCase{"released_shape", "1,1,2,2,4", 32, 256, 256, 256, 2, 2}),
                         [](const auto& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(Small, VqParityTest,
                         ::testing::Values(VqCase{"grey_2lv", "1,2", 32, 32, 16, 4, 1, 1, 4},
                                           VqCase{"rgb_3lv", "1,1,2", 32, 64, 64, 8, 3, 2, 3}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace vkspec
