// Every registered op check (engine/checks) as its own test: GPU result vs CPU reference.
#include <gtest/gtest.h>

#include "engine/checks/op_check.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

class OpCheckTest : public testing::VulkanTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(OpCheckTest, MatchesCpuReference) {
  const OpCheck& c = op_checks()[GetParam()];
  const CheckResult r = c.run(ctx());
  if (r.skipped) GTEST_SKIP() << r.detail;
  EXPECT_LE(r.error, r.tolerance) << c.op << " " << c.name << ": " << r.detail;
}

std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
  const OpCheck& c = op_checks()[info.param];
  std::string s = c.op + "_" + c.name;
  for (char& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s + "_" + std::to_string(info.param);
}

INSTANTIATE_TEST_SUITE_P(All, OpCheckTest, ::testing::Range<size_t>(0, op_checks().size()), case_name);

}  // namespace
}  // namespace vkspec
