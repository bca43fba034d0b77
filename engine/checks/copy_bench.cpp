// Device-to-device copy bandwidth: the yardstick for every bandwidth-bound op.
#include <cstring>
#include <vector>

#include "engine/checks/op_bench.h"

namespace vkspec {
namespace {

BenchResult bench_copy(Context& ctx, int repeat, int64_t mib) {
  const int64_t words = mib << 18;
  Tensor a = ctx.tensor(DType::U32, {words}, "copy src"), b = ctx.tensor(DType::U32, {words}, "copy dst");
  CommandStream fill(ctx);
  fill.fill(a, 0x3f800000u);
  fill.submit_and_wait();
  BenchResult r;
  r.kernel = "transfer";  // vkCmdCopyBuffer: lavapipe runs it as memcpy
  r.bytes = 2.0 * static_cast<double>(a.bytes());
  r.gpu_ms = median_gpu_ms(
      ctx, repeat, [&](CommandStream& s) { s.copy(a, b); }, &r.gpu_process_cpu_ms);
  std::vector<uint32_t> ha(static_cast<size_t>(words), 1u), hb(static_cast<size_t>(words));
  r.cpu = "memcpy";
  r.cpu_ms = median_cpu_ms(repeat, [&] { std::memcpy(hb.data(), ha.data(), ha.size() * 4); });
  return r;
}

VKSPEC_OP_BENCH("copy", "64 MiB", [](Context& c, int repeat) { return bench_copy(c, repeat, 64); });

}  // namespace
}  // namespace vkspec
