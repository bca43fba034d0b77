// ZipAR: with w = W it is ar token for token (same keys, same visibility); smaller windows decode
// several rows per forward with the forward count the schedule predicts; every query attends only
// to committed tokens, so a run is reproducible and independent of what the cache held before.
#include <gtest/gtest.h>

#include "tests/support/decoding_fixture.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using testing::by_name;
using testing::kTinyGrid;
using testing::run_images;

class decoding_zipar : public testing::VulkanTest {};

TEST_F(decoding_zipar, FullWindowIsAr) {
  const testing::Sample ar = run_images(ctx(), by_name("ar"), {}, 31, 12);
  const testing::Sample zip = run_images(ctx(), by_name("zipar"), {{"window", std::to_string(kTinyGrid)}}, 31, 12);
  EXPECT_EQ(ar.grids, zip.grids);
  EXPECT_EQ(zip.nfe_per_image, static_cast<double>(kTinyGrid * kTinyGrid));
}

// Rows start w apart and advance together: the last row starts after (H - 1) * w steps and takes
// W more, so a W x W image takes (W - 1) * w + W forwards.
TEST_F(decoding_zipar, ForwardsFollowTheRowSchedule) {
  for (int w = 1; w <= kTinyGrid; ++w) {
    const testing::Sample s = run_images(ctx(), by_name("zipar"), {{"window", std::to_string(w)}}, 40, 3, true);
    EXPECT_EQ(s.nfe_per_image, static_cast<double>((kTinyGrid - 1) * w + kTinyGrid)) << "w=" << w;
    // Step 1 with w = 1: row 0 samples column 1 while row 1 starts.
    if (w == 1) {
      EXPECT_EQ(s.events[0][1].accepted, (std::vector<int32_t>{1, kTinyGrid}));
    }
  }
}

// Verification only ever costs forwards when drafts are rejected; relaxed verification rejects
// less than exact verification.
TEST_F(decoding_zipar, VerificationModes) {
  const double plain = run_images(ctx(), by_name("zipar"), {{"window", "1"}}, 50, 40).nfe_per_image;
  const double exact =
      run_images(ctx(), by_name("zipar"), {{"window", "1"}, {"verify", "exact"}}, 50, 40).nfe_per_image;
  const double relaxed =
      run_images(ctx(), by_name("zipar"), {{"window", "1"}, {"verify", "lantern"}, {"k", "8"}, {"delta", "1"}}, 50, 40)
          .nfe_per_image;
  EXPECT_GE(exact, plain);
  EXPECT_LE(relaxed, exact);
  EXPECT_LT(exact, static_cast<double>(kTinyGrid * kTinyGrid));
}

TEST_F(decoding_zipar, OptionsAreChecked) {
  StrategyInputs in;
  in.condition = std::make_shared<ClassLabel>(0);
  in.options = {{"window", std::to_string(kTinyGrid + 1)}};
  EXPECT_THROW(make_strategy("zipar", testing::tiny_models(ctx()).set, in), Error);
  in.options = {{"init", "left"}};
  EXPECT_THROW(make_strategy("zipar", testing::tiny_models(ctx()).set, in), Error);
  in.options = {{"verify", "maybe"}};
  EXPECT_THROW(make_strategy("zipar", testing::tiny_models(ctx()).set, in), Error);
  in.options = {{"delta", "0.1"}};  // belongs to --verify lantern
  EXPECT_THROW(make_strategy("zipar", testing::tiny_models(ctx()).set, in), Error);
}

}  // namespace
}  // namespace vkspec
