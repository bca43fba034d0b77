#include "engine/ops/matmul_tiles.h"

namespace vkspec::ops {

MatmulTiles matmul_tiles(const DeviceCaps& caps) {
  // llvmpipe (2 cores, 8 lanes): storage-buffer loads cost per lane, so the broadcast kernel
  // (weights by texel fetch, activations shared by broadcast) with big register tiles wins
  // (docs/perf.md); 16 weight rows per lane when decoding, 8/12/16 activation rows per tile
  // otherwise (matmul.cpp picks the one that pads least).
  static constexpr MatmulTiles kCpu{"cpu", 8, 64, 4, 64, 4, 8, 2, 2, 16, 16, 16, 32, 8};
  // GPUs: coalesced K-split GEMV, many small workgroups in flight, up to 24 rows (decoding, and
  // verification windows up to 11 with CFG); the tiled kernels beyond. The crossover measured on
  // an H200 (bench-ops --op matmul-sweep, docs/perf.md): GEMV against the cooperative-matrix
  // kernel, ms, at 18 / 34 / 66 rows: 0.012 / 0.029 / 0.050 against 0.021 / 0.023 / 0.025 for
  // 768x256, 0.049 / 0.129 / 0.220 against 0.091 / 0.099 / 0.106 for 3840x1280. No broadcast
  // kernel (it makes every lane stream its own weight rows, which defeats coalescing).
  static constexpr MatmulTiles kNvidia{"nvidia", 24, 128, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0};
  static constexpr MatmulTiles kAmd{"amd", 24, 256, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0};
  static constexpr MatmulTiles kDefault{"default", 24, 128, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0};
  if (caps.cpu_driver) return kCpu;
  if (caps.vendor_id == 0x10de) return kNvidia;
  if (caps.vendor_id == 0x1002) return kAmd;
  return kDefault;
}

}  // namespace vkspec::ops
