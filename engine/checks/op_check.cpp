#include "engine/checks/op_check.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/error.h"

namespace vkspec {

std::vector<OpCheck>& op_checks() {
  static std::vector<OpCheck> checks;
  return checks;
}

RegisterOpCheck::RegisterOpCheck(std::string op, std::string name, std::function<CheckResult(Context&)> run) {
  op_checks().push_back({std::move(op), std::move(name), std::move(run)});
}

double normalised_error(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return NAN;
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return NAN;
    const double d = static_cast<double>(got[i]) - static_cast<double>(want[i]);
    num += d * d;
    den += static_cast<double>(want[i]) * static_cast<double>(want[i]);
  }
  if (den == 0) return std::sqrt(num / std::max<size_t>(got.size(), 1));
  return std::sqrt(num / den);
}

std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

Tensor upload_floats(Context& ctx, const std::vector<float>& data, DType dtype, Shape shape, const std::string& name) {
  if (static_cast<int64_t>(data.size()) != shape.numel())
    throw Error("upload_floats " + name + ": " + std::to_string(data.size()) + " values for shape " + shape.str());
  Tensor t = ctx.tensor(dtype, shape, name);
  if (dtype == DType::F32) {
    ctx.upload(t, data.data(), data.size() * 4);
  } else if (dtype == DType::F16) {
    std::vector<uint16_t> h(data.size());
    for (size_t i = 0; i < data.size(); ++i) h[i] = float_to_half(data[i]);
    ctx.upload(t, h.data(), h.size() * 2);
  } else {
    throw Error("upload_floats " + name + ": dtype must be f32 or f16");
  }
  return t;
}

std::vector<float> download_floats(Context& ctx, const Tensor& t) {
  if (t.dtype() != DType::F32) throw Error("download_floats " + t.name() + ": not f32");
  std::vector<float> v(static_cast<size_t>(t.numel()));
  ctx.download(t, v.data(), v.size() * 4);
  return v;
}

std::vector<float> round_to_half(const std::vector<float>& v) {
  std::vector<float> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = half_to_float(float_to_half(v[i]));
  return r;
}

KvWriteCase random_kv_write_case(int64_t B, int64_t T, int64_t S, int64_t width, DType dt, bool per_batch_slots,
                                 uint64_t seed) {
  KvWriteCase c{random_floats(static_cast<size_t>(B * S * width), seed),
                random_floats(static_cast<size_t>(B * S * width), seed + 1),
                {}};
  if (dt == DType::F16) {
    c.k_cache = round_to_half(c.k_cache);
    c.v_cache = round_to_half(c.v_cache);
  }
  std::mt19937_64 rng(seed + 2);
  for (int64_t b = 0; b < (per_batch_slots ? B : 1); ++b) {
    std::vector<uint32_t> perm(static_cast<size_t>(S));
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<uint32_t>(i);
    std::shuffle(perm.begin(), perm.end(), rng);
    c.slots.insert(c.slots.end(), perm.begin(), perm.begin() + T);
  }
  c.slots[c.slots.size() / 2] = static_cast<uint32_t>(S + 5);
  return c;
}

void ref_kv_write_stored(const ref::AttentionDims& d, DType cache_dt, std::vector<float> k, std::vector<float> v,
                         const std::vector<uint32_t>& slots, std::vector<float>& kc, std::vector<float>& vc) {
  if (cache_dt == DType::F16) {
    k = round_to_half(k);
    v = round_to_half(v);
  }
  ref::kv_write(d, k, slots, kc);
  ref::kv_write(d, v, slots, vc);
}

}  // namespace vkspec
