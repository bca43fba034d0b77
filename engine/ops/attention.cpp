#include "engine/ops/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {
namespace {

constexpr const char* kOp = "attention";

struct Plan {
  uint32_t wg = 0, qg = 1, min_sg = 1, qblock = 1, qblocks = 1, splits = 1, chunk = 0;
};

uint64_t split_bytes(const AttentionShape& sh, uint64_t splits) {
  return static_cast<uint64_t>(sh.batch * sh.heads * sh.tokens) * splits * static_cast<uint64_t>(sh.head_dim + 2) * 4;
}

// The workspace's first eighth (in words) holds the splits' arrival counters, the rest their
// partials, so the layout depends only on the workspace's size and every call sharing it agrees on
// where the counters are. A call splits only where its partials fit the rest; its counters (one per
// batch row, head and query group: at most B * H * T) then fit the eighth, because the partials
// take splits * (head_dim + 2) >= 8 words per (b, h, t).
uint64_t counter_words(uint64_t workspace_bytes) { return workspace_bytes / 4 / 8; }
uint64_t partial_room(uint64_t workspace_bytes) { return (workspace_bytes / 4 - counter_words(workspace_bytes)) * 4; }
uint64_t workspace_for(uint64_t partial_bytes) {
  const uint64_t words = partial_bytes / 4;
  return (words + (words + 6) / 7) * 4;  // w - w / 8 >= words for w = words + ceil(words / 7)
}

// max_workspace: bytes available for split partials (UINT64_MAX when asking what is preferred).
Plan make_plan(const Context& ctx, const AttentionShape& sh, const AttentionOptions& opt, uint64_t max_workspace) {
  const uint32_t forced_splits = opt.splits;
  // What the pass width, the workgroup and the split are chosen for (AttentionOptions::plan_tokens).
  const int64_t plan_tokens = std::max<int64_t>(opt.plan_tokens, sh.tokens);
  const DeviceCaps& caps = ctx.caps();
  const bool cpu = caps.cpu_driver;
  const uint32_t sg = std::max<uint32_t>(caps.subgroup_size, 1);
  const uint32_t max_sg = std::max(caps.max_subgroup_size, sg);
  Plan p;
  p.min_sg = std::max<uint32_t>(std::min(caps.min_subgroup_size ? caps.min_subgroup_size : sg, sg), 1);
  // More queries per pass reuse each loaded cache element more often. The butterfly needs
  // QG <= subgroup size; on GPUs QG * pairs-per-lane stays <= 4, which also bounds the registers
  // that queries and accumulators take (arrays sized for the smallest subgroup size): a pass's
  // per-slot work (butterfly, broadcasts) grows with QG while the slots wait on memory anyway; an
  // H200 ran a window of 17 over 145 slots (4 heads) in 0.072 ms at QG 16, 0.030 at 4 and 0.021
  // at 1, and 33 queries with 16 heads in 0.141 / 0.053 / 0.075 (bench-ops --op attention-sweep,
  // docs/perf.md).
  const uint32_t pairs_per_lane = static_cast<uint32_t>((sh.head_dim / 2 + p.min_sg - 1) / p.min_sg);
  const uint32_t cap = std::min<uint32_t>({16u, p.min_sg, cpu ? 16u : std::max<uint32_t>(4u / pairs_per_lane, 1)});
  p.qg = 1;
  if (opt.queries_per_pass) {
    const uint32_t g = opt.queries_per_pass;
    require((g & (g - 1)) == 0 && g <= 16 && g <= p.min_sg, kOp, [&] {
      return "queries_per_pass must be a power of two <= 16 and <= the smallest subgroup size " +
             std::to_string(p.min_sg) + ", got " + std::to_string(g);
    });
    p.qg = g;
  } else {
    while (p.qg < plan_tokens && p.qg * 2 <= cap) p.qg <<= 1;
  }
  // lavapipe runs a workgroup's subgroups one after another on one thread, so several subgroups
  // per workgroup buy nothing there; GPUs get a few warps per workgroup when the queries allow.
  const int64_t groups = (plan_tokens + p.qg - 1) / p.qg;
  const uint32_t subgroups = cpu ? 1u : static_cast<uint32_t>(std::clamp<int64_t>(groups, 1, 4));
  p.wg = std::min(subgroups * max_sg, caps.max_workgroup_invocations);
  p.qblock = std::max<uint32_t>(1, p.wg / sg) * p.qg;
  p.qblocks = ceil_div(static_cast<uint64_t>(sh.tokens), p.qblock);
  const uint64_t plan_qblocks = ceil_div(static_cast<uint64_t>(plan_tokens), p.qblock);
  // Split the slots until there are enough workgroups to fill the device, keeping chunks long
  // enough to amortise the combine pass: 32 slots on a CPU, 8 on a GPU, where a subgroup walks its
  // chunk one slot after another, each waiting on its cache loads (an H200: one query over 145
  // slots 0.029 ms in 5 chunks, 0.019 in 10, 0.015 in 20).
  const int64_t plan_rows = opt.split_rows > 0 ? std::min(opt.split_rows, sh.batch) : sh.batch;
  const uint64_t units = static_cast<uint64_t>(plan_rows * sh.heads) * plan_qblocks;
  // lavapipe runs one workgroup per CPU thread at a time.
  const uint64_t target = cpu ? 2 * std::max<uint64_t>(std::thread::hardware_concurrency(), 1) : 512;
  const uint64_t kv = static_cast<uint64_t>(sh.kv_len), min_chunk = cpu ? 32 : 8;
  // Chunks cut for split_slots (the sequence's), as many as cover kv_len: every chunk runs (those
  // past a query's slots add exact zeros), and one chunk or several is one kernel or two, which
  // round differently.
  const uint64_t planned = opt.split_slots > 0 ? static_cast<uint64_t>(opt.split_slots) : kv;
  const uint64_t cut = std::max(planned, kv);
  const uint64_t most = caps.max_workgroup_count[0] / plan_qblocks;
  uint64_t splits = forced_splits
                        ? forced_splits
                        : std::min<uint64_t>((target + units - 1) / units, (planned + min_chunk - 1) / min_chunk);
  splits = std::max<uint64_t>(std::min(splits, most), 1);
  p.chunk = static_cast<uint32_t>((planned + splits - 1) / splits);
  uint64_t chunks = p.chunk ? (cut + p.chunk - 1) / p.chunk : 1;
  // Where the workspace or the grid holds fewer (a cache far past its sequence), chunks for all
  // of kv_len.
  const uint64_t room = std::min(most, split_bytes(sh, 1) ? max_workspace / split_bytes(sh, 1) : most);
  if (chunks > 1 && chunks > room) {
    splits = std::max<uint64_t>(room, 1);
    p.chunk = static_cast<uint32_t>((cut + splits - 1) / splits);
    chunks = (cut + p.chunk - 1) / p.chunk;
  }
  p.splits = static_cast<uint32_t>(chunks);
  return p;
}

}  // namespace

bool attention_loads_available(const DeviceCaps& caps, AttentionLoads loads) {
  if (loads == AttentionLoads::Wide) return caps.shader_int64;
  if (loads == AttentionLoads::Texel) return caps.max_texel_buffer_elements > 0;
  return true;
}

uint64_t attention_workspace_bytes(const Context& ctx, const AttentionShape& shape, const AttentionOptions& opt) {
  const Plan p = make_plan(ctx, shape, opt, UINT64_MAX);
  return p.splits > 1 ? workspace_for(split_bytes(shape, p.splits)) : 0;
}

uint64_t attention_workspace_bytes_up_to(const Context& ctx, const AttentionShape& shape, const AttentionOptions& opt) {
  AttentionShape each = shape;
  uint64_t bytes = 0;
  for (int64_t t = 1; t <= shape.tokens; t *= 2) {
    each.tokens = t;
    bytes = std::max(bytes, attention_workspace_bytes(ctx, each, opt));
  }
  return std::max(bytes, attention_workspace_bytes(ctx, shape, opt));
}

uint64_t attention_workspace_bytes_any_cache(const Context& ctx, AttentionShape shape, const AttentionOptions& opt) {
  shape.kv_len = std::numeric_limits<int32_t>::max();  // past every cap on the split count
  const uint64_t bytes = attention_workspace_bytes_up_to(ctx, shape, opt);
  // A quarter more: the chunks a cache's scratch slots add past its sequence's (split_slots).
  return bytes ? bytes + workspace_for(bytes / 4) : 0;
}

Tensor attention_workspace(Context& ctx, uint64_t bytes, const std::string& name) {
  if (bytes == 0) return Tensor();
  Tensor ws = ctx.tensor(DType::F32, {static_cast<int64_t>((bytes + 3) / 4)}, name);
  CommandStream s(ctx);
  s.fill(ws.view(), 0);
  s.submit_and_wait();
  return ws;
}

namespace {

// q, the caches, kv_len and out checked against each other; returns T, the queries per batch row.
int64_t checked_queries(const DeviceCaps& caps, const HeadRows& q, int64_t batch, const TensorView& k_cache,
                        const TensorView& v_cache, int64_t kv_len, const TensorView& out) {
  require(caps.subgroup_shuffle && caps.subgroup_ballot && caps.subgroup_in_compute, kOp,
          "device lacks subgroup shuffle and ballot in compute shaders");
  q.validate(kOp, "q");
  require(batch > 0 && q.tokens % batch == 0, kOp, [&] {
    return "q has " + std::to_string(q.tokens) + " tokens, not a multiple of batch " + std::to_string(batch);
  });
  const int64_t T = q.tokens / batch, H = q.heads, Dh = q.head_dim;
  require(Dh % 2 == 0 && Dh <= 256, kOp, [&] { return "head_dim must be even and <= 256, got " + std::to_string(Dh); });
  const Shape cache_shape = k_cache.shape;
  require(k_cache.dtype == v_cache.dtype && (k_cache.dtype == DType::F32 || k_cache.dtype == DType::F16), kOp,
          "caches must both be f32 or both f16");
  require(cache_shape == v_cache.shape && cache_shape.rank == 4 && cache_shape[0] == batch && cache_shape[2] == H &&
              cache_shape[3] == Dh,
          kOp, [&] {
            return "caches " + cache_shape.str() + " / " + v_cache.shape.str() + " must be [" + std::to_string(batch) +
                   ", S, " + std::to_string(H) + ", " + std::to_string(Dh) + "] for q " + q.str();
          });
  // The kernel reads cache elements in pairs (vec2 / one word of halves).
  const uint64_t cache_align = k_cache.dtype == DType::F32 ? 8 : 4;
  require(k_cache.offset % cache_align == 0 && v_cache.offset % cache_align == 0, kOp,
          [&] { return "cache views must start at a multiple of " + std::to_string(cache_align) + " bytes"; });
  require(kv_len >= 0 && kv_len <= cache_shape[1], kOp,
          [&] { return "kv_len " + std::to_string(kv_len) + " outside [0, " + std::to_string(cache_shape[1]) + "]"; });
  require(out.dtype == DType::F32 && out.numel() == batch * T * H * Dh, kOp, [&] {
    return "out " + out.shape.str() + " must be f32 with " + std::to_string(batch * T * H * Dh) + " elements";
  });
  require(!overlap(out, q.data) && !overlap(out, k_cache) && !overlap(out, v_cache), kOp,
          "out must not overlap q or the caches");
  return T;
}

// The mask checked: its rows (T shared, or B * T) and bit words per row (0 without bits).
struct MaskLayout {
  int64_t rows = 0, words = 0;
  bool bits = false;
};
MaskLayout checked_mask(const AttentionMask& mask, int64_t batch, int64_t T, int64_t kv_len) {
  const TensorView& r = mask.ranges;
  require(r.dtype == DType::U32 && r.shape.rank >= 1 && r.shape[r.shape.rank - 1] == 2 &&
              (r.numel() == T * 2 || r.numel() == batch * T * 2),
          kOp, [&] {
            return "ranges must be u32 [T, 2] or [B, T, 2] for T=" + std::to_string(T) + ", got " + r.shape.str();
          });
  MaskLayout l;
  l.rows = r.numel() / 2;
  l.bits = mask.bits.buffer != VK_NULL_HANDLE;
  if (!l.bits) return l;
  const TensorView& m = mask.bits;
  require(m.dtype == DType::U32 && m.shape.rank >= 1, kOp, [&] { return "bits must be u32, got " + m.shape.str(); });
  l.words = m.shape[m.shape.rank - 1];
  require(m.numel() == l.rows * l.words && l.words * 32 >= kv_len, kOp, [&] {
    return "bits " + m.shape.str() + " must hold " + std::to_string(l.rows) +
           " rows of >= " + std::to_string((kv_len + 31) / 32) + " words";
  });
  return l;
}

// The kernel for the caches' loads (opt.loads, else the device's best), checked.
ShaderId choose_shader(const DeviceCaps& caps, const AttentionOptions& opt, const TensorView& k_cache,
                       const TensorView& v_cache, int64_t Dh, bool* texel) {
  const bool f16 = k_cache.dtype == DType::F16;
  const bool wide_ok = attention_loads_available(caps, AttentionLoads::Wide) && Dh % (f16 ? 4 : 2) == 0 &&
                       k_cache.offset % 8 == 0 && v_cache.offset % 8 == 0;
  require(opt.loads != AttentionLoads::Wide || wide_ok, kOp, [&] {
    return "64-bit cache loads need shaderInt64, head_dim % " + std::string(f16 ? "4" : "2") +
           " == 0 and 8-byte aligned caches";
  });
  const bool texel_ok = f16 && Dh % 4 == 0 && attention_loads_available(caps, AttentionLoads::Texel) &&
                        texel_readable(k_cache) && texel_readable(v_cache);
  require(opt.loads != AttentionLoads::Texel || texel_ok, kOp,
          "texel cache loads need f16 caches, head_dim % 4 == 0 and caches starting on a texel of their views");
  *texel = opt.loads == AttentionLoads::Texel || (opt.loads == AttentionLoads::Auto && caps.cpu_driver && texel_ok);
  const bool wide = !*texel && (opt.loads == AttentionLoads::Wide || (opt.loads == AttentionLoads::Auto && wide_ok));
  return *texel ? shaders::attention_f16_texel
         : f16  ? (wide ? shaders::attention_f16 : shaders::attention_f16_narrow)
                : (wide ? shaders::attention_f32 : shaders::attention_f32_narrow);
}

}  // namespace

void attention(CommandStream& s, const Attention& a, const AttentionOptions& opt) {
  const HeadRows& q = a.q;
  const int64_t batch = a.batch, kv_len = a.kv_len;
  const TensorView &k_cache = a.k_cache, &v_cache = a.v_cache, &out = a.out, &workspace = a.workspace;
  const AttentionMask& mask = a.mask;
  Context& ctx = s.context();
  const DeviceCaps& caps = ctx.caps();
  const int64_t T = checked_queries(caps, q, batch, k_cache, v_cache, kv_len, out);
  const int64_t H = q.heads, Dh = q.head_dim, S = k_cache.shape[1];
  const MaskLayout ml = checked_mask(mask, batch, T, kv_len);
  const bool has_ws = workspace.buffer != VK_NULL_HANDLE;
  require(!has_ws || workspace.dtype == DType::F32, kOp, "workspace must be f32");
  require(!has_ws || (!overlap(workspace, out) && !overlap(workspace, q.data) && !overlap(workspace, k_cache) &&
                      !overlap(workspace, v_cache)),
          kOp, "workspace must not overlap the other tensors");
  bool texel = false;
  const ShaderId shader = choose_shader(caps, opt, k_cache, v_cache, Dh, &texel);
  const AttentionShape sh{batch, T, H, Dh, kv_len};
  const Plan p = make_plan(ctx, sh, opt, has_ws ? partial_room(workspace.bytes) : 0);
  require(H <= caps.max_workgroup_count[1] && batch <= caps.max_workgroup_count[2] &&
              static_cast<uint64_t>(p.qblocks) * p.splits <= caps.max_workgroup_count[0],
          kOp, [&] { return "grid exceeds the device's workgroup count limits for q " + q.str(); });
  const uint32_t fixed_sg = caps.subgroup_lane_reads ? caps.subgroup_size : 0;
  const Pipeline& pipe = ctx.pipeline(shader, {p.wg, static_cast<uint32_t>(Dh), p.qg, p.min_sg, fixed_sg,
                                               caps.cpu_driver ? 1u : 0u, p.splits > 1 ? 1u : 0u});
  struct {
    uint32_t T, H, slots, kv_len, q_stride, q_offset, meta_batch_stride, words, has_bits, qblock, chunk, splits;
    float scale;
    uint32_t k_texel0, v_texel0, ws_base;
  } push{static_cast<uint32_t>(T),
         static_cast<uint32_t>(H),
         static_cast<uint32_t>(S),
         static_cast<uint32_t>(kv_len),
         static_cast<uint32_t>(q.row_stride),
         static_cast<uint32_t>(q.col_offset),
         static_cast<uint32_t>(ml.rows == T ? 0 : T),
         static_cast<uint32_t>(ml.words),
         ml.bits ? 1u : 0u,
         p.qblock,
         p.chunk,
         p.splits,
         opt.scale > 0 ? opt.scale : 1.0f / std::sqrt(static_cast<float>(Dh)),
         texel ? static_cast<uint32_t>((k_cache.offset - k_cache.texels.begin) / 16) : 0u,
         texel ? static_cast<uint32_t>((v_cache.offset - v_cache.texels.begin) / 16) : 0u,
         static_cast<uint32_t>(counter_words(has_ws ? workspace.bytes : 0))};
  const TensorView& r = mask.ranges;
  const TensorView bits = ml.bits ? mask.bits : r;  // unread placeholder without bits
  // Without splits the shader never touches its workspace binding, so any bound view will do but
  // out, whose staged copy (on devices that cannot bind its offset) would be written back over it.
  const TensorView& ws = p.splits > 1 ? workspace : r;
  s.dispatch(pipe, {q.data, k_cache, v_cache, r, bits, out, ws}, push, p.qblocks * p.splits, H, batch);
}

}  // namespace vkspec::ops
