#include "engine/ops/matmul_tiles.h"

namespace vkspec::ops {

MatmulTiles matmul_tiles(const DeviceCaps& caps) {
  // llvmpipe (2 cores, 8 lanes): storage-buffer loads cost per lane, so the broadcast kernel
  // (weights by texel fetch, activations shared by broadcast) with big register tiles wins
  // (docs/perf.md); 16 weight rows per lane when decoding, 8/12/16 activation rows per tile
  // otherwise (matmul.cpp picks the one that pads least).
  static constexpr MatmulTiles kCpu{"cpu", 8, 64, 4, 64, 4, 8, 2, 2, 16, 16, 16, 32, 8};
  // GPUs: coalesced K-split GEMV, many small workgroups in flight, up to 40 rows (decoding, and
  // verification windows up to 19 with CFG); the tiled kernels beyond. Chosen from whole forwards
  // (bench --synthetic on H100 / H200, docs/perf.md), not from bench-ops' matmul-sweep: timed
  // alone, the cooperative-matrix kernel matches GEMV at 34 rows (0.050 against 0.073 ms for
  // 2304x768), yet on one H200 a LlamaGen window-16 forward (34 rows) took 2.88 ms (B) and 13.5 ms
  // (XL) with GEMV against 5.68 and 27.1 with it; at 66 rows the tiled kernel wins (B 5.93 against
  // 6.57 ms). VKSPEC_GEMV_MAX_ROWS overrides this row's limit to repeat the comparison.
  // No broadcast kernel (it makes every lane stream its own weight rows, which defeats coalescing).
  static constexpr MatmulTiles kNvidia{"nvidia", 40, 128, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0};
  static constexpr MatmulTiles kAmd{"amd", 40, 256, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0};
  static constexpr MatmulTiles kDefault{"default", 40, 128, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0};
  if (caps.cpu_driver) return kCpu;
  if (caps.vendor_id == 0x10de) return kNvidia;
  if (caps.vendor_id == 0x1002) return kAmd;
  return kDefault;
}

}  // namespace vkspec::ops
