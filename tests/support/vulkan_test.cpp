#include "tests/support/vulkan_test.h"

#include <memory>

namespace vkspec::testing {

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
