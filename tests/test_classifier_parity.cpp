// The engine's classifier against PyTorch on a random network: features and predicted classes.
#include <gtest/gtest.h>

#include "engine/checks/op_check.h"
#include "engine/model/classifier.h"
#include "engine/model/safetensors_writer.h"
#include "common/error.h"
#include "tests/support/python_reference.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

class ClassifierParityTest : public testing::VulkanTest {};

TEST_F(ClassifierParityTest, FeaturesAndPredictionsMatchPyTorch) {
  const std::string dir = testing::scratch_dir("classifier_parity");
  auto r = testing::run_reference({"make-classifier", dir + "/c.safetensors"});
  if (r.skipped) GTEST_SKIP() << r.message;
  ASSERT_TRUE(r.ok) << r.message;
  const int64_t n = 5;
  const std::vector<float> nchw = random_floats(static_cast<size_t>(n * 32 * 32), 11);
  SafetensorsWriter w;
  w.add_f32("pixels", {n, 1, 32, 32}, nchw);
  w.write(dir + "/px.safetensors");
  r = testing::run_reference({"classify", dir + "/c.safetensors", "--pixels", dir + "/px.safetensors", "--out",
                              dir + "/out.safetensors"});
  ASSERT_TRUE(r.ok) << r.message;
  SafetensorsFile ref(dir + "/out.safetensors");
  const std::vector<float> want_f = ref.read_f32("features"), logits = ref.read_f32("logits");

  Classifier c(ctx(), dir + "/c.safetensors", 8);
  Tensor img = upload_floats(ctx(), nchw, DType::F32, {n, 32, 32, 1}, "images");  // 1 channel: NCHW == NHWC
  const ClassifierResult res = c.run(img, n);
  const double e = normalised_error(res.features, want_f);
  EXPECT_LE(e * e, 1e-5);
  for (int64_t i = 0; i < n; ++i) {
    int best = 0;
    for (int k = 1; k < 10; ++k)
      if (logits[static_cast<size_t>(i * 10 + k)] > logits[static_cast<size_t>(i * 10 + best)]) best = k;
    EXPECT_EQ(res.predictions[static_cast<size_t>(i)], best) << "image " << i;
  }
}

TEST_F(ClassifierParityTest, RejectsAModelOfAnotherKind) {
  const std::string dir = testing::scratch_dir("classifier_kind");
  SafetensorsWriter w;
  w.set_metadata("vkspec.kind", "gpt");
  w.add_f32("x", {1}, {0.0f});
  w.write(dir + "/g.safetensors");
  try {
    Classifier c(ctx(), dir + "/g.safetensors");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a vkspec classifier"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkspec
