#include "tests/support/vulkan_test.h"

#include <cstdlib>
#include <memory>

namespace vkspec::testing {
namespace {

// The build's own cache (pipelines, neighbour tables, cached references), not the user's, unless
// the environment names one: CTest's ENVIRONMENT property does not reach GoogleTest cases whole
// (gtest_discover_tests keeps only the first variable of a list).
const int kTestCacheDir = setenv("VKSPEC_CACHE_DIR", VKSPEC_BINARY_DIR "/test-cache", 0);

}  // namespace

Context& test_context() {
  static std::unique_ptr<Context> ctx = [] {
    InstanceOptions io = InstanceOptions::from_environment();
    io.validation = true;  // always on in tests, whatever the environment says
    // Also synchronization validation: gtest_discover_tests drops all but the first variable of a
    // list-valued ENVIRONMENT property, so the CTest environment cannot be relied on for it.
    io.sync_validation = true;
    auto instance = std::make_shared<Instance>(io);
    return std::make_unique<Context>(instance, instance->preferred_device());
  }();
  return *ctx;
}

void VulkanTest::SetUp() { test_context().instance().validation_log().take(); }

void VulkanTest::TearDown() {
  for (const std::string& m : test_context().instance().validation_log().take()) ADD_FAILURE() << m;
}

}  // namespace vkspec::testing
