#include "engine/ops/kv_write.h"

#include "shaders/shader_ids.h"

namespace vkspec::ops {
namespace {

// kv_write's checks; returns T, the tokens per batch row.
int64_t check_kv_write_args(const char* op, const HeadRows& k, const HeadRows& v, int64_t batch,
                            const TensorView& slots, const TensorView& k_cache, const TensorView& v_cache) {
  k.validate(op, "k");
  v.validate(op, "v");
  require(k.tokens == v.tokens && k.heads == v.heads && k.head_dim == v.head_dim, op,
          [&] { return "k " + k.str() + " and v " + v.str() + " differ"; });
  require(batch > 0 && k.tokens % batch == 0, op,
          [&] { return std::to_string(k.tokens) + " tokens are not a multiple of batch " + std::to_string(batch); });
  require(k.head_dim % 2 == 0, op, [&] { return "head_dim must be even, got " + std::to_string(k.head_dim); });
  const int64_t T = k.tokens / batch;
  require(k_cache.dtype == v_cache.dtype && (k_cache.dtype == DType::F32 || k_cache.dtype == DType::F16), op,
          "caches must both be f32 or both f16");
  const Shape& cs = k_cache.shape;
  require(cs == v_cache.shape && cs.rank == 4 && cs[0] == batch && cs[2] == k.heads && cs[3] == k.head_dim, op, [&] {
    return "caches " + cs.str() + " / " + v_cache.shape.str() + " must be [" + std::to_string(batch) + ", S, " +
           std::to_string(k.heads) + ", " + std::to_string(k.head_dim) + "] for k " + k.str();
  });
  require(slots.dtype == DType::U32 && (slots.numel() == T || slots.numel() == batch * T), op,
          [&] { return "slots must be u32 [T] or [B, T] for T=" + std::to_string(T) + ", got " + slots.shape.str(); });
  require(k_cache.buffer != v_cache.buffer || k_cache.offset + k_cache.bytes <= v_cache.offset ||
              v_cache.offset + v_cache.bytes <= k_cache.offset,
          op, "k and v caches overlap");
  return T;
}

uint32_t slot_batch_stride(const TensorView& slots, int64_t T) {
  return static_cast<uint32_t>(slots.numel() == T ? 0 : T);
}

}  // namespace

void kv_write(CommandStream& s, const HeadRows& k, const HeadRows& v, int64_t batch, const TensorView& slots,
              const TensorView& k_cache, const TensorView& v_cache) {
  const int64_t T = check_kv_write_args("kv_write", k, v, batch, slots, k_cache, v_cache);
  const Shape& cs = k_cache.shape;
  Context& ctx = s.context();
  const uint64_t n = static_cast<uint64_t>(k.tokens) * k.heads * (k.head_dim / 2);
  const uint32_t wg = ctx.default_workgroup_size();
  const Grid g = grid_1d(ctx, n, wg);
  struct {
    uint32_t tokens, T, H, head_dim, S, k_stride, k_offset, v_stride, v_offset, slot_batch_stride;
  } push{static_cast<uint32_t>(k.tokens),     static_cast<uint32_t>(T),
         static_cast<uint32_t>(k.heads),      static_cast<uint32_t>(k.head_dim),
         static_cast<uint32_t>(cs[1]),        static_cast<uint32_t>(k.row_stride),
         static_cast<uint32_t>(k.col_offset), static_cast<uint32_t>(v.row_stride),
         static_cast<uint32_t>(v.col_offset), slot_batch_stride(slots, T)};
  const Pipeline& p = ctx.pipeline(shaders::kv_write, {wg, k_cache.dtype == DType::F16 ? 1u : 0u});
  s.dispatch(p, {slots, k.data, v.data, k_cache, v_cache}, push, g.x, g.y);
}

RopeKvLayout check_rope_2d_kv_write(const char* op, const Rope2dKvWrite& a) {
  const HeadRows &q = a.q, &k = a.k, &v = a.v;
  check_rope_2d_args(op, q, a.positions, a.table);
  check_rope_2d_args(op, k, a.positions, a.table);
  const int64_t T = check_kv_write_args(op, k, v, a.batch, a.slots, a.k_cache, a.v_cache);
  require(q.tokens == k.tokens && q.heads == k.heads && q.head_dim == k.head_dim, op,
          [&] { return "q " + q.str() + " and k " + k.str() + " differ"; });
  // q and k are rotated in place and v read: they may share a buffer (the wqkv output) but not elements.
  auto apart = [](const HeadRows& a, const HeadRows& b) {
    if (a.data.buffer == b.data.buffer && a.data.offset == b.data.offset && a.row_stride == b.row_stride)
      return a.col_offset + a.width() <= b.col_offset || b.col_offset + b.width() <= a.col_offset;
    return !overlap(a.data, b.data);
  };
  require(apart(q, k) && apart(q, v) && apart(k, v), op, "q, k and v must not overlap");
  return {static_cast<uint32_t>(T), static_cast<uint32_t>(a.k_cache.shape[1]), slot_batch_stride(a.slots, T),
          static_cast<uint32_t>(a.positions.shape[0]), static_cast<uint32_t>(a.table.shape[0])};
}

void rope_2d_kv_write(CommandStream& s, const Rope2dKvWrite& a) {
  const RopeKvLayout l = check_rope_2d_kv_write("rope_2d_kv_write", a);
  const HeadRows &q = a.q, &k = a.k, &v = a.v;
  Context& ctx = s.context();
  const uint64_t n = static_cast<uint64_t>(k.tokens) * k.heads * (k.head_dim / 2);
  const uint32_t wg = ctx.default_workgroup_size();
  const Grid g = grid_1d(ctx, n, wg);
  struct {
    uint32_t tokens, T, H, head_dim, S, q_stride, q_offset, k_stride, k_offset, v_stride, v_offset, slot_batch_stride,
        pos_rows, n_pos;
  } push{static_cast<uint32_t>(k.tokens),
         l.T,
         static_cast<uint32_t>(k.heads),
         static_cast<uint32_t>(k.head_dim),
         l.S,
         static_cast<uint32_t>(q.row_stride),
         static_cast<uint32_t>(q.col_offset),
         static_cast<uint32_t>(k.row_stride),
         static_cast<uint32_t>(k.col_offset),
         static_cast<uint32_t>(v.row_stride),
         static_cast<uint32_t>(v.col_offset),
         l.slot_batch_stride,
         l.pos_rows,
         l.n_pos};
  const Pipeline& p = ctx.pipeline(shaders::rope_kv_write, {wg, a.k_cache.dtype == DType::F16 ? 1u : 0u});
  s.dispatch(p, {a.positions, a.table, a.slots, q.data, k.data, v.data, a.k_cache, a.v_cache}, push, g.x, g.y);
}

}  // namespace vkspec::ops
