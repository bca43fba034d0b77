// Stores one element pair of k and of v at element e of the caches [B, S, H, head_dim] (shared by
// kv_write.comp, rope_kv_write.comp and the q|k|v projections' fold, rope_kv_fold.glsl),
// converting to f16 for f16 caches: an f16 cache is written in whole 32-bit words and never read
// back. The includer declares CACHE_F16 and the bindings KC_BINDING and VC_BINDING.
layout(binding = KC_BINDING) writeonly buffer KC { uint kc[]; };
layout(binding = VC_BINDING) writeonly buffer VC { uint vc[]; };

void k_store(uint e, vec2 k) {
  if (CACHE_F16 != 0) {
    kc[e >> 1] = packHalf2x16(k);
  } else {
    kc[e] = floatBitsToUint(k.x);
    kc[e + 1u] = floatBitsToUint(k.y);
  }
}

void v_store(uint e, vec2 v) {
  if (CACHE_F16 != 0) {
    vc[e >> 1] = packHalf2x16(v);
  } else {
    vc[e] = floatBitsToUint(v.x);
    vc[e + 1u] = floatBitsToUint(v.y);
  }
}

void kv_store(uint e, vec2 k, vec2 v) {
  k_store(e, k);
  v_store(e, v);
}
