// The environment reader (common/env.h): typed getters name the variable and the bad value, a
// renamed variable is refused, and the table under docs/usage.md's "Environment variables"
// heading lists exactly the variables the reader declares, with the same settings and effects.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/env.h"
#include "common/error.h"
#include "engine/vk/mesa_shader_cache.h"

namespace vkspec {
namespace {

// Sets a variable for one scope and restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Env, AbsentAndEmptyReadTheSame) {
  ScopedEnv unset(env::kMaxDeviceMemory.name, nullptr);
  EXPECT_FALSE(env::byte_count(env::kMaxDeviceMemory));
  ScopedEnv empty(env::kMaxDeviceMemory.name, "");
  EXPECT_FALSE(env::byte_count(env::kMaxDeviceMemory));
  EXPECT_FALSE(env::text(env::kMaxDeviceMemory));
}

TEST(Env, FlagsAreZeroOrOne) {
  ScopedEnv on(env::kValidationPrint.name, "1");
  EXPECT_TRUE(env::flag(env::kValidationPrint));
  ScopedEnv off(env::kValidationPrint.name, "0");
  EXPECT_FALSE(env::flag(env::kValidationPrint));
  ScopedEnv bad(env::kValidationPrint.name, "yes");
  EXPECT_EQ(error_of([] { env::flag(env::kValidationPrint); }), "VKSPEC_VALIDATION_PRINT=yes is not 0 or 1");
}

TEST(Env, ByteCountsTakeBinarySuffixes) {
  ScopedEnv mib(env::kMaxDeviceMemory.name, "512M");
  EXPECT_EQ(env::byte_count(env::kMaxDeviceMemory), 512ull << 20);
  ScopedEnv gib(env::kMaxDeviceMemory.name, "1.5g");
  EXPECT_EQ(env::byte_count(env::kMaxDeviceMemory), 3ull << 29);
  ScopedEnv plain(env::kMaxDeviceMemory.name, "4096");
  EXPECT_EQ(env::byte_count(env::kMaxDeviceMemory), 4096u);
  for (const char* bad : {"lots", "5T", "-1M", "1e30G", "M"}) {
    ScopedEnv e(env::kMaxDeviceMemory.name, bad);
    EXPECT_EQ(error_of([] { env::byte_count(env::kMaxDeviceMemory); }),
              std::string("VKSPEC_MAX_DEVICE_MEMORY=") + bad + " is not a byte count (examples: 512M, 2G, 1048576)");
  }
}

TEST(Env, UnsignedIntegersCheckTheirRange) {
  ScopedEnv ok(env::kDevice.name, "3");
  EXPECT_EQ(env::unsigned_integer(env::kDevice, 3), 3u);
  EXPECT_EQ(error_of([] { env::unsigned_integer(env::kDevice, 2); }), "VKSPEC_DEVICE=3 is not a device index (0..2)");
  for (const char* bad : {"gpu", "-1", "1.0", " 1", "99999999999999999999999"}) {
    ScopedEnv e(env::kFenceTimeoutMs.name, bad);
    EXPECT_EQ(error_of([] { env::unsigned_integer(env::kFenceTimeoutMs); }),
              std::string("VKSPEC_FENCE_TIMEOUT_MS=") + bad + " is not a whole number of milliseconds");
  }
}

TEST(Env, ARenamedVariableIsRefusedNamingItsSuccessor) {
  ScopedEnv old(env::kDisableCoopmat.old_name, "1");
  const std::string msg = error_of([] { env::flag(env::kDisableCoopmat); });
  EXPECT_NE(msg.find("VKSPEC_DISABLE_FP16"), std::string::npos) << msg;
  EXPECT_NE(msg.find("VKSPEC_DISABLE_COOPMAT"), std::string::npos) << msg;
}

// The rows of the table under docs/usage.md's "### Environment variables" heading, as written
// (the section ends at the next heading of any level).
std::vector<std::string> usage_table_rows() {
  std::ifstream f(std::string(VKSPEC_SOURCE_DIR) + "/docs/usage.md");
  std::vector<std::string> rows;
  bool inside = false;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("#", 0) == 0)
      inside = line == "### Environment variables";
    else if (inside && line.rfind("| `", 0) == 0)
      rows.push_back(line);
  }
  return rows;
}

TEST(Env, UsageTableListsExactlyTheDeclaredVariables) {
  std::vector<std::string> want;
  for (const env::Variable* v : env::variables()) {
    EXPECT_EQ(std::string(v->setting).rfind(std::string(v->name) + "=", 0), 0u) << v->name;
    want.push_back(std::string("| `") + v->setting + "` | " + v->effect + " |");
  }
  EXPECT_FALSE(usage_table_rows().empty()) << "no table under docs/usage.md's Environment variables";
  EXPECT_EQ(usage_table_rows(), want) << "docs/usage.md's Environment variables table and common/env.cpp disagree";
}

// Mesa 25's llvmpipe shares one shader cache across vector widths (a crash when a width loads
// another's code), so a forced width gets a folder of its own, and a caller's choice is kept.
TEST(MesaShaderCache, ForcedVectorWidthGetsAFolderOfItsOwn) {
  const std::string root = ::testing::TempDir() + "vkspec_mesa_cache_test";
  std::filesystem::remove_all(root);
  ScopedEnv width("LP_NATIVE_VECTOR_WIDTH", "128"), dir("MESA_SHADER_CACHE_DIR", nullptr),
      off("MESA_SHADER_CACHE_DISABLE", nullptr);
  const std::string set = keep_forced_width_shader_cache_apart(root);
  EXPECT_EQ(set, root + "/mesa-shader-cache/width-128");
  ASSERT_NE(std::getenv("MESA_SHADER_CACHE_DIR"), nullptr);
  EXPECT_EQ(std::string(std::getenv("MESA_SHADER_CACHE_DIR")), set);
  EXPECT_TRUE(std::filesystem::is_directory(set));
  EXPECT_EQ(std::getenv("MESA_SHADER_CACHE_DISABLE"), nullptr);
  std::filesystem::remove_all(root);
}

TEST(MesaShaderCache, CallersFolderAndTheDefaultWidthAreLeftAlone) {
  {
    ScopedEnv width("LP_NATIVE_VECTOR_WIDTH", "512"), dir("MESA_SHADER_CACHE_DIR", "/somewhere/else");
    EXPECT_EQ(keep_forced_width_shader_cache_apart("/tmp/unused"), "");
    EXPECT_EQ(std::string(std::getenv("MESA_SHADER_CACHE_DIR")), "/somewhere/else");
  }
  ScopedEnv width("LP_NATIVE_VECTOR_WIDTH", nullptr), dir("MESA_SHADER_CACHE_DIR", nullptr);
  EXPECT_EQ(keep_forced_width_shader_cache_apart("/tmp/unused"), "");
  EXPECT_EQ(std::getenv("MESA_SHADER_CACHE_DIR"), nullptr);
}

TEST(MesaShaderCache, NoCacheFolderTurnsMesasCacheOffForAForcedWidth) {
  ScopedEnv width("LP_NATIVE_VECTOR_WIDTH", "256"), dir("MESA_SHADER_CACHE_DIR", nullptr),
      off("MESA_SHADER_CACHE_DISABLE", nullptr);
  EXPECT_EQ(keep_forced_width_shader_cache_apart(""), "");
  EXPECT_EQ(std::getenv("MESA_SHADER_CACHE_DIR"), nullptr);
  ASSERT_NE(std::getenv("MESA_SHADER_CACHE_DISABLE"), nullptr);
  EXPECT_EQ(std::string(std::getenv("MESA_SHADER_CACHE_DISABLE")), "true");
}

}  // namespace
}  // namespace vkspec
