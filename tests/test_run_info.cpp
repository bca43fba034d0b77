// cli/run_info.h: the lavapipe thread note that bench prints beside the device, from
// LP_NUM_THREADS as the driver reads it, and nothing for any other driver.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "cli/run_info.h"

namespace vkspec::cli {
namespace {

// Sets LP_NUM_THREADS for one test (nullopt: unset) and restores the value it found.
class ScopedThreads {
 public:
  explicit ScopedThreads(const std::optional<std::string>& value) {
    if (const char* v = std::getenv("LP_NUM_THREADS")) saved_ = v;
    if (value)
      setenv("LP_NUM_THREADS", value->c_str(), 1);
    else
      unsetenv("LP_NUM_THREADS");
  }
  ~ScopedThreads() {
    if (saved_)
      setenv("LP_NUM_THREADS", saved_->c_str(), 1);
    else
      unsetenv("LP_NUM_THREADS");
  }

 private:
  std::optional<std::string> saved_;
};

DeviceCaps lavapipe() {
  DeviceCaps c;
  c.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  c.cpu_driver = true;
  return c;
}

TEST(LavapipeThreads, InlineWhenZero) {
  ScopedThreads t(std::string("0"));
  const std::string note = lavapipe_threads(lavapipe());
  EXPECT_NE(note.find("inline"), std::string::npos) << note;
  EXPECT_NE(note.find("LP_NUM_THREADS=0"), std::string::npos) << note;
}

TEST(LavapipeThreads, NamesTheWorkerCountGiven) {
  ScopedThreads t(std::string("3"));
  const std::string note = lavapipe_threads(lavapipe());
  EXPECT_NE(note.find("3 worker threads"), std::string::npos) << note;
  EXPECT_EQ(note.find("inline on"), std::string::npos) << note;
}

TEST(LavapipeThreads, SaysWhenTheDefaultApplies) {
  ScopedThreads t(std::nullopt);
  const std::string note = lavapipe_threads(lavapipe());
  EXPECT_NE(note.find("LP_NUM_THREADS unset"), std::string::npos) << note;
}

TEST(LavapipeThreads, NothingForOtherDrivers) {
  ScopedThreads t(std::string("0"));
  DeviceCaps gpu;
  gpu.name = "NVIDIA H200";
  EXPECT_EQ(lavapipe_threads(gpu), "");
  DeviceCaps other_cpu;  // a CPU driver that is not llvmpipe (SwiftShader) has no such variable
  other_cpu.name = "SwiftShader Device (LLVM 10.0.0)";
  other_cpu.cpu_driver = true;
  EXPECT_EQ(lavapipe_threads(other_cpu), "");
}

}  // namespace
}  // namespace vkspec::cli
