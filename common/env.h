#pragma once
// The one reader of environment variables. Each VKSPEC_* variable is declared here once, with the
// setting and effect that docs/usage.md's "Environment variables" table shows (tests/test_env.cpp
// keeps the two equal). Typed getters parse the value or throw Error naming the variable and the bad
// value; unset and empty read the same, as absent.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vkspec::env {

struct Variable {
  const char* name;     // "VKSPEC_DEVICE"
  const char* setting;  // the table's first column: "VKSPEC_DEVICE=N"
  const char* effect;   // the table's second column
  const char* accepts;  // completes "<name>=<value> is not ..." in errors: "a device index"
  // A former name: setting it is an error that names this variable instead of being ignored.
  const char* old_name = nullptr;
};

extern const Variable kDevice;
extern const Variable kValidation;
extern const Variable kSyncValidation;
extern const Variable kValidationPrint;
extern const Variable kMaxDeviceMemory;
extern const Variable kFenceTimeoutMs;
extern const Variable kCacheDir;
extern const Variable kDisableCoopmat;
extern const Variable kCoopmatKhr;
extern const Variable kDisableMatmulFolds;
extern const Variable kGpuKernels;
extern const Variable kMaskFeatures;
extern const Variable kGemvMaxRows;
extern const Variable kGemvRowsTile;
extern const Variable kAssets;

// Every variable above, in the order of README.md's table.
const std::vector<const Variable*>& variables();

// The value as given.
std::optional<std::string> text(const Variable& v);
// 1 or 0; absent is false.
bool flag(const Variable& v);
// Decimal digits, at most max (the error then shows the range 0..max).
std::optional<uint64_t> unsigned_integer(const Variable& v, uint64_t max = UINT64_MAX);
// Bytes with an optional K, M or G suffix (binary): 1048576, 512M, 1.5G.
std::optional<uint64_t> byte_count(const Variable& v);

// A variable other software defines (HOME, XDG_CACHE_HOME, DISPLAY, thread counts), as given.
std::optional<std::string> external(const char* name);

}  // namespace vkspec::env
