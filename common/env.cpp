#include "common/env.h"

#include <cstdlib>
#include <cstring>

#include "common/error.h"

namespace vkspec::env {

const Variable kDevice{"VKSPEC_DEVICE", "VKSPEC_DEVICE=N",
                       "use device N (see `vkspec devices`) instead of discrete > integrated > CPU", "a device index"};
const Variable kValidation{"VKSPEC_VALIDATION", "VKSPEC_VALIDATION=1",
                           "Khronos validation layer with a debug messenger (always on in tests)", "0 or 1"};
const Variable kSyncValidation{"VKSPEC_SYNC_VALIDATION", "VKSPEC_SYNC_VALIDATION=1",
                               "also synchronization validation (on in tests)", "0 or 1"};
const Variable kValidationPrint{"VKSPEC_VALIDATION_PRINT", "VKSPEC_VALIDATION_PRINT=1",
                                "print validation messages as they arrive", "0 or 1"};
const Variable kMaxDeviceMemory{"VKSPEC_MAX_DEVICE_MEMORY", "VKSPEC_MAX_DEVICE_MEMORY=512M",
                                "cap device memory (out-of-memory handling tests); K, M, G suffixes",
                                "a byte count (examples: 512M, 2G, 1048576)"};
const Variable kFenceTimeoutMs{"VKSPEC_FENCE_TIMEOUT_MS", "VKSPEC_FENCE_TIMEOUT_MS=60000",
                               "how long a submission may run before it is reported as hung",
                               "a whole number of milliseconds"};
const Variable kCacheDir{"VKSPEC_CACHE_DIR", "VKSPEC_CACHE_DIR=DIR",
                         "where caches live: Vulkan pipelines, codebook neighbour tables, reference statistics, "
                         "test references (default `$XDG_CACHE_HOME/vkspec`, else `~/.cache/vkspec`); `off` "
                         "disables them",
                         "a directory or off"};
const Variable kDisableCoopmat{"VKSPEC_DISABLE_COOPMAT", "VKSPEC_DISABLE_COOPMAT=1",
                               "never choose the cooperative-matrix matmul automatically (a diagnostic); its "
                               "old name `VKSPEC_DISABLE_FP16` is refused with an error",
                               "0 or 1", "VKSPEC_DISABLE_FP16"};
const Variable kCoopmatKhr{"VKSPEC_COOPMAT_KHR", "VKSPEC_COOPMAT_KHR=1",
                           "on a device with both NV and KHR cooperative matrix, run the cooperative-matrix "
                           "matmul through KHR (default: NV there, KHR where NV is missing)",
                           "0 or 1"};
const Variable kDisableMatmulFolds{"VKSPEC_DISABLE_MATMUL_FOLDS", "VKSPEC_DISABLE_MATMUL_FOLDS=1",
                                   "a projection's norm, gate and residual add run as dispatches of their own "
                                   "instead of in the matmul's loads and stores (a diagnostic: what folding "
                                   "saves, timed against the default)",
                                   "0 or 1"};
const Variable kGpuKernels{"VKSPEC_GPU_KERNELS", "VKSPEC_GPU_KERNELS=1",
                           "a CPU device (lavapipe) takes the kernel variants a GPU takes (the GPU matmul tile "
                           "table: gemv, gemm; per-invocation loads; several subgroups per workgroup), so CI "
                           "checks them; slower there; in CI greedy ar and scd-mc give the same tokens, sampled "
                           "runs may diverge by rounding",
                           "0 or 1"};
const Variable kMaskFeatures{"VKSPEC_MASK_FEATURES", "VKSPEC_MASK_FEATURES=LIST",
                             "treat the device as lacking these optional features (comma-separated: "
                             "push-descriptor, int64, int8, float16, 16bit-storage, 8bit-storage, "
                             "subgroup-size-control, cooperative-matrix; small-offset-alignment: storage "
                             "views need 256-byte offsets, as on SwiftShader), so the paths devices without "
                             "them take are checked on any device",
                             "a comma-separated list of those names"};
const Variable kGemvMaxRows{"VKSPEC_GEMV_MAX_ROWS", "VKSPEC_GEMV_MAX_ROWS=N",
                            "the GEMV matmul takes up to N activation rows, the tiled kernels more (a tuning "
                            "diagnostic: the device's tile table otherwise; `bench --synthetic` shows the "
                            "crossover in whole forwards)",
                            "a row count from 1 to 256"};
const Variable kGemvRowsTile{"VKSPEC_GEMV_ROWS_TILE", "VKSPEC_GEMV_ROWS_TILE=R,MG[,FROM]",
                             "the row-block GEMV (GPU matmul from FROM rows, default 9, up to the GEMV "
                             "limit) takes R weight rows per workgroup and MG activation rows per "
                             "subgroup; 0: the plain GEMV for every row count (a tuning diagnostic: the "
                             "device's tile table otherwise)",
                             "0, or R and MG from 1 to 16, FROM from 1 to 256"};
const Variable kAssets{"VKSPEC_ASSETS", "VKSPEC_ASSETS=DIR",
                       "where the CLI and the viewer find the shipped models (default: the source tree's "
                       "`assets/`)",
                       "a directory"};

const std::vector<const Variable*>& variables() {
  static const std::vector<const Variable*> all = {
      &kDevice,         &kValidation,   &kSyncValidation, &kValidationPrint, &kMaxDeviceMemory,
      &kFenceTimeoutMs, &kCacheDir,     &kDisableCoopmat, &kCoopmatKhr,      &kDisableMatmulFolds,
      &kGpuKernels,     &kMaskFeatures, &kGemvMaxRows,    &kGemvRowsTile,    &kAssets};
  return all;
}

namespace {

const char* set_value(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

const char* raw(const Variable& v) {
  if (v.old_name && set_value(v.old_name))
    throw Error(std::string(v.old_name) + " was renamed " + v.name + ", the name of what it does; set " + v.name +
                " instead");
  return set_value(v.name);
}

[[noreturn]] void reject(const Variable& v, const char* value, const std::string& detail = "") {
  throw Error(std::string(v.name) + "=" + value + " is not " + v.accepts + detail);
}

}  // namespace

std::optional<std::string> text(const Variable& v) {
  if (const char* value = raw(v)) return std::string(value);
  return std::nullopt;
}

bool flag(const Variable& v) {
  const char* value = raw(v);
  if (!value) return false;
  if (std::strcmp(value, "1") == 0) return true;
  if (std::strcmp(value, "0") == 0) return false;
  reject(v, value);
}

std::optional<uint64_t> unsigned_integer(const Variable& v, uint64_t max) {
  const char* value = raw(v);
  if (!value) return std::nullopt;
  const std::string range = max == UINT64_MAX ? "" : " (0.." + std::to_string(max) + ")";
  uint64_t n = 0;
  for (const char* c = value; *c; ++c) {
    const uint64_t digit = static_cast<uint64_t>(*c - '0');
    if (*c < '0' || *c > '9' || digit > max || n > (max - digit) / 10) reject(v, value, range);
    n = n * 10 + digit;
  }
  return n;
}

std::optional<uint64_t> byte_count(const Variable& v) {
  const char* value = raw(v);
  if (!value) return std::nullopt;
  char* end = nullptr;
  const double n = std::strtod(value, &end);
  if (end == value) reject(v, value);
  double unit = 1;
  if (*end == 'K' || *end == 'k')
    unit = 1ull << 10, ++end;
  else if (*end == 'M' || *end == 'm')
    unit = 1ull << 20, ++end;
  else if (*end == 'G' || *end == 'g')
    unit = 1ull << 30, ++end;
  // 2^64 itself does not fit: the comparison is against the double nearest it.
  if (*end != '\0' || !(n >= 0) || !(n * unit < 18446744073709551616.0)) reject(v, value);
  return static_cast<uint64_t>(n * unit);
}

std::optional<std::string> external(const char* name) {
  if (const char* value = set_value(name)) return std::string(value);
  return std::nullopt;
}

}  // namespace vkspec::env
