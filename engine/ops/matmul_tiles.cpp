#include "engine/ops/matmul_tiles.h"

namespace vkspec::ops {
namespace {

constexpr uint32_t kGoogleVendorId = 0x1ae0;  // SwiftShader's

}  // namespace

MatmulTiles matmul_tiles(const DeviceCaps& caps) {
  // llvmpipe (2 cores, 8 lanes): storage-buffer loads cost per lane, so the broadcast kernel
  // (weights by texel fetch, activations shared by broadcast) with big register tiles wins
  // (docs/perf.md); 16 weight rows per lane when decoding, 8/12/16 activation rows per tile
  // otherwise (matmul.cpp picks the one that pads least).
  static constexpr MatmulTiles kCpu{
      "cpu", 8, 64, 4, 64, 4, 8, 2, 2, 16, 16, 16, 32, 8, 64, 0, 0, 9, "llvmpipe, 2 x86-64 cores, 2026-11"};
  // GPUs: coalesced K-split GEMV for decoding (up to 8 rows: 2 with CFG), many small workgroups in
  // flight; from 9 rows the row-block GEMV (matmul_rows.comp: 8 weight rows per workgroup, 4
  // activation rows per subgroup); the tiled kernels beyond gemv_max_rows. Chosen from whole
  // forwards (bench --synthetic, docs/perf.md "NVIDIA H200"), not from bench-ops' matmul-sweep,
  // whose kernels timed alone disagree with the forwards. On one H200 (2026-11-27), LlamaGen-B
  // 16x16: window 16 (32 rows) 2.88 ms with the plain GEMV, 1.91 with the row-block one, 5.80 with
  // the cooperative-matrix kernel; window 32 (64 rows) 2.60 row-block against 6.07 cooperative
  // matrix, window 64 (128 rows) 8.23 against 6.61; XL window 16: 13.70 plain, 7.87 row-block.
  // The row-block kernel lost at 2 rows (B AR step 1.03-1.34 against 0.93 ms).
  // VKSPEC_GEMV_MAX_ROWS and VKSPEC_GEMV_ROWS_TILE override these to repeat the comparisons.
  // AMD and other GPUs take the same kernels, unmeasured there; their GEMV limit stays at the
  // 40 rows it had before the row-block kernel until one of them is measured.
  // No broadcast kernel (it makes every lane stream its own weight rows, which defeats coalescing).
  static constexpr MatmulTiles kNvidia{
      "nvidia", 80, 128, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0, 64, 8, 4, 9, "NVIDIA H100 and H200, 2026-11-26/27"};
  static constexpr MatmulTiles kAmd{"amd", 40, 256, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0, 64, 8, 4, 9, nullptr};
  static constexpr MatmulTiles kDefault{"default", 40, 128, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0, 64, 8, 4, 9, nullptr};
  // SwiftShader (Google's CPU Vulkan: no int64, so no broadcast kernel): its texel fetches go
  // through the sampler's routines, so the GEMV (texel weights on CPU drivers) lost to the tiled
  // kernel at every row count, 2 rows included: the shipped model's ar 78.8 -> 31.3 s an image
  // (docs/perf.md, "SwiftShader").
  static constexpr MatmulTiles kSwiftShader{"swiftshader",
                                            0,
                                            64,
                                            4,
                                            64,
                                            4,
                                            8,
                                            2,
                                            2,
                                            0,
                                            0,
                                            0,
                                            0,
                                            0,
                                            64,
                                            0,
                                            0,
                                            9,
                                            "SwiftShader (Chromium 156, Subzero), 2 x86-64 cores, 2026-11"};
  if (caps.cpu_driver && caps.vendor_id == kGoogleVendorId) return kSwiftShader;
  if (caps.cpu_driver) return kCpu;
  if (caps.vendor_id == 0x10de) return kNvidia;
  if (caps.vendor_id == 0x1002) return kAmd;
  return kDefault;
}

std::string matmul_tiles_summary(const DeviceCaps& caps) {
  const MatmulTiles t = matmul_tiles(caps);
  std::string s = std::string(t.name) + ": ";
  if (t.gemv_max_rows == 0) {
    s += "tiled kernel at every row count";
  } else if (t.bcast_gemv_tn) {
    s += "broadcast kernel where K allows, else GEMV to " + std::to_string(t.gemv_max_rows) + " rows, then tiled";
  } else {
    const std::string limit = std::to_string(t.gemv_max_rows);
    s += t.rows_outputs
             ? "GEMV to " + std::to_string(t.rows_from - 1) + " rows, row-block GEMV (" +
                   std::to_string(t.rows_outputs) + " x " + std::to_string(t.rows_per_subgroup) + ") to " + limit
             : "GEMV to " + limit + " rows";
    s += ", then tiled";
  }
  s += t.tuned_on ? std::string("; tuned on ") + t.tuned_on : "; not measured on this vendor";
  return s;
}

}  // namespace vkspec::ops
