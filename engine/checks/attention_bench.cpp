// attention at the shapes the model runs (GPT-L: 16 heads of 64; two CFG rows): decode, a
// speculative window, and a full causal prefill; f16 and f32 caches. The CPU column is the
// single-threaded double-precision reference, a correctness tool rather than a tuned baseline.
#include <cmath>
#include <string>

#include "engine/checks/op_bench.h"
#include "engine/ops/attention.h"
#include "engine/ops/attention_mask.h"
#include "engine/ref/attention_ref.h"

namespace vkspec {
namespace {

// A prefix-masked forward of `shape` (its kv_len slots, the cache's) with caches of type dt.
BenchResult bench_attention(Context& ctx, int repeat, const ops::AttentionShape& shape, DType dt,
                            const ops::AttentionOptions& opt = {}) {
  const int64_t B = shape.batch, T = shape.tokens, H = shape.heads, Dh = shape.head_dim, kv = shape.kv_len;
  const int64_t S = kv, width = H * Dh;
  const auto q = random_floats(static_cast<size_t>(B * T * width), 71);
  const auto k = random_floats(static_cast<size_t>(B * S * width), 72), v = random_floats(k.size(), 73);
  ops::AttentionMaskBuilder mb(T, S);
  std::vector<uint8_t> vis(static_cast<size_t>(T * S), 0);
  for (int64_t t = 0; t < T; ++t) {
    mb.see_prefix(t, kv - T + t + 1);
    std::fill_n(vis.begin() + t * S, kv - T + t + 1, uint8_t{1});
  }
  const ops::AttentionMaskTensors mask = ops::upload_attention_mask(ctx, mb.pack());
  Tensor tq = upload_floats(ctx, q, DType::F32, {B * T, width}, "q");
  Tensor tk = upload_floats(ctx, k, dt, {B, S, H, Dh}, "k"), tv = upload_floats(ctx, v, dt, {B, S, H, Dh}, "v");
  Tensor out = ctx.tensor(DType::F32, {B * T, width}, "out");
  const uint64_t ws_bytes = ops::attention_workspace_bytes(ctx, shape, opt);
  Tensor ws = ops::attention_workspace(ctx, ws_bytes, "ws");
  BenchResult r;
  r.kernel = ws_bytes ? "split" : "flash";
  double pairs = 0;
  for (int64_t t = 0; t < T; ++t) pairs += static_cast<double>(kv - T + t + 1);
  r.flops = 4.0 * static_cast<double>(B * H * Dh) * pairs;
  r.bytes = static_cast<double>(tq.bytes() + tk.bytes() + tv.bytes() + out.bytes());
  ops::Attention a;
  a.q = ops::HeadRows::packed(tq, B * T, H, Dh);
  a.batch = B;
  a.k_cache = tk;
  a.v_cache = tv;
  a.kv_len = kv;
  a.mask = mask.view();
  a.out = out;
  if (ws.valid()) a.workspace = ws.view();
  r.gpu_ms = median_gpu_ms(ctx, repeat, [&](CommandStream& s) { ops::attention(s, a, opt); });
  r.cpu = "ref (double, 1 thread)";
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dh));
  r.cpu_ms = median_cpu_ms(std::min(repeat, 3), [&] { ref::attention({B, T, S, H, Dh}, q, k, v, vis, kv, scale); });
  return r;
}

struct Register {
  Register() {
    struct S {
      int64_t B, T, kv;
    };
    for (const S& s : {S{2, 1, 257}, S{2, 1, 1025}, S{2, 16, 273}, S{2, 257, 257}})
      for (DType dt : {DType::F16, DType::F32})
        RegisterOpBench("attention",
                        std::string(dtype_name(dt)) + " B" + std::to_string(s.B) + " T" + std::to_string(s.T) + " S" +
                            std::to_string(s.kv),
                        [s, dt](Context& c, int repeat) {
                          return bench_attention(c, repeat, {s.B, s.T, 16, 64, s.kv}, dt);
                        });
    // attention-sweep (run only when named): queries per pass x splits on the shipped model's AR
    // step and window-16 forward (4 heads) and LlamaGen-L's (16 heads), for choosing a device's
    // plan; 0 is the plan's own choice.
    struct W {
      int64_t T, kv, H;
    };
    for (const W& w : {W{1, 145, 4}, W{17, 145, 4}, W{17, 145, 16}, W{33, 161, 16}})
      for (uint32_t qg : {0u, 1u, 4u, 16u})
        for (uint32_t splits : {0u, 5u, 10u, 20u}) {
          if (w.T == 1 && qg > 1) continue;
          ops::AttentionOptions opt;
          opt.queries_per_pass = qg;
          opt.splits = splits;
          RegisterOpBench("attention-sweep",
                          "B2 T" + std::to_string(w.T) + " S" + std::to_string(w.kv) + " H" + std::to_string(w.H) +
                              " qg" + std::to_string(qg) + " sp" + std::to_string(splits),
                          [w, opt](Context& c, int repeat) {
                            return bench_attention(c, repeat, {2, w.T, w.H, 64, w.kv}, DType::F16, opt);
                          });
        }
  }
} register_attention_benches;

}  // namespace
}  // namespace vkspec
