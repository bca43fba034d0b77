#include "engine/model/kv_cache.h"

#include "common/error.h"

namespace vkspec {

KvCache::KvCache(Context& ctx, const GptConfig& cfg, int64_t batch, int64_t slots, DType dtype)
    : batch_(batch), slots_(slots), dtype_(dtype) {
  if (batch < 1 || slots < 1) throw Error("KV cache needs batch >= 1 and slots >= 1");
  if (dtype != DType::F32 && dtype != DType::F16) throw Error("KV cache dtype must be f32 or f16");
  for (int64_t l = 0; l < cfg.n_layer; ++l) {
    const std::string n = "kv cache layer " + std::to_string(l);
    k_.push_back(ctx.tensor(dtype, {batch, slots, cfg.n_head, cfg.head_dim}, n + " keys"));
    v_.push_back(ctx.tensor(dtype, {batch, slots, cfg.n_head, cfg.head_dim}, n + " values"));
  }
}

uint64_t KvCache::bytes() const {
  uint64_t b = 0;
  for (size_t i = 0; i < k_.size(); ++i) b += k_[i].bytes() + v_[i].bytes();
  return b;
}

}  // namespace vkspec
