// Every registered op check (engine/checks): GPU result vs CPU reference. One test per op runs all
// of that op's cases in one process, as `vkspec selftest --op NAME` does: a test process costs about
// 0.35 s of CPU before its first check (instance, validation layer, device), which with a process
// per case was 170 of the 190 CPU seconds the op checks took on a warm cache. Each case is still
// its own assertion, named in its failure, and so is each validation message it provokes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/checks/op_check.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

// The ops in registration order, each once.
std::vector<std::string> op_names() {
  std::vector<std::string> ops;
  for (const OpCheck& c : op_checks())
    if (std::find(ops.begin(), ops.end(), c.op) == ops.end()) ops.push_back(c.op);
  return ops;
}

class OpCheckTest : public testing::VulkanTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(OpCheckTest, MatchesCpuReference) {
  size_t ran = 0, skipped = 0;
  for (const OpCheck& c : op_checks()) {
    if (c.op != GetParam()) continue;
    const std::string what = c.op + " " + c.name;
    ++ran;
    try {
      const CheckResult r = c.run(ctx());
      if (r.skipped) {
        ++skipped;
        std::printf("skipped %s: %s\n", what.c_str(), r.detail.c_str());
      } else {
        EXPECT_LE(r.error, r.tolerance) << what << ": " << r.detail;
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << " threw: " << e.what();
    }
    for (const std::string& m : ctx().instance().validation_log().take()) ADD_FAILURE() << what << ": " << m;
  }
  ASSERT_GT(ran, 0u);
  if (skipped == ran) GTEST_SKIP() << "every " << GetParam() << " case needs what this device lacks";
}

std::string case_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(All, OpCheckTest, ::testing::ValuesIn(op_names()), case_name);

}  // namespace
}  // namespace vkspec
