#pragma once
// Every Vulkan test derives from VulkanTest: one Context per test process with the Khronos
// validation layer on, and any validation message during a test fails that test.
#include <gtest/gtest.h>

#include "engine/vk/context.h"

namespace vkspec::testing {

// The process-wide validated context (created on first use).
Context& test_context();

class VulkanTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  Context& ctx() { return test_context(); }
};

}  // namespace vkspec::testing
