#pragma once
// A registry of GPU-vs-CPU-reference checks. Each op's check file registers cases with
// VKSPEC_OP_CHECK; `vkspec selftest` and the CTest suite run the same list.
#include <functional>
#include <string>
#include <vector>

#include "engine/ref/attention_ref.h"
#include "engine/vk/context.h"

namespace vkspec {

struct CheckResult {
  double error = 0;      // normalised error (see normalised_error), or mismatch fraction for exact ops
  double tolerance = 0;  // pass when error <= tolerance
  std::string detail;    // shapes, what was compared
  bool skipped = false;  // the case needs what this device lacks (detail says what); counts as a pass
  bool pass() const { return skipped || error <= tolerance; }  // NaN error fails
  static CheckResult skip(std::string why) { return {0, 0, std::move(why), true}; }
};

struct OpCheck {
  std::string op;    // "matmul", "rms_norm", ...
  std::string name;  // case: "gemv f16 M=1 N=4096 K=4096"
  std::function<CheckResult(Context&)> run;
};

std::vector<OpCheck>& op_checks();

struct RegisterOpCheck {
  RegisterOpCheck(std::string op, std::string name, std::function<CheckResult(Context&)> run);
};

#define VKSPEC_CHECK_CONCAT2(a, b) a##b
#define VKSPEC_CHECK_CONCAT(a, b) VKSPEC_CHECK_CONCAT2(a, b)
// VKSPEC_OP_CHECK("rms_norm", "rows=3 dim=768", [](Context& ctx) { ...; return CheckResult{...}; });
#define VKSPEC_OP_CHECK(op, name, fn) \
  static ::vkspec::RegisterOpCheck VKSPEC_CHECK_CONCAT(vkspec_op_check_, __LINE__)(op, name, fn)

// sqrt(sum (got - want)^2 / sum want^2), accumulated in double; NaN or Inf in got gives NaN;
// an all-zero want compares absolute error instead.
double normalised_error(const std::vector<float>& got, const std::vector<float>& want);

// Deterministic test data: uniform in [lo, hi) from a fixed seed.
std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f);

// Uploads host floats into a new device tensor of the given dtype (F32 or F16).
Tensor upload_floats(Context& ctx, const std::vector<float>& data, DType dtype, Shape shape, const std::string& name);
// Downloads an F32 tensor.
std::vector<float> download_floats(Context& ctx, const Tensor& t);
// Rounds through f16 and back, so the CPU reference sees exactly what the GPU reads.
std::vector<float> round_to_half(const std::vector<float>& v);

// KV-cache write test data: caches [B, S, H * Dh] of random values (through f16 for f16 caches),
// and cache slots for T new tokens, [T] or per batch row [B, T], distinct within a row, with one
// slot past S (which the op must skip). Seeds seed, seed + 1 and seed + 2.
struct KvWriteCase {
  std::vector<float> k_cache, v_cache;
  std::vector<uint32_t> slots;
};
KvWriteCase random_kv_write_case(int64_t B, int64_t T, int64_t S, int64_t width, DType dt, bool per_batch_slots,
                                 uint64_t seed);

// The reference for kv_write: new rows k and v [B * T, H * Dh] go into the caches kc and vc at
// slots as the device stores them (through f16 for f16 caches).
void ref_kv_write_stored(const ref::AttentionDims& d, DType cache_dt, std::vector<float> k, std::vector<float> v,
                         const std::vector<uint32_t>& slots, std::vector<float>& kc, std::vector<float>& vc);

}  // namespace vkspec
