#include "engine/ops/matmul_tiles.h"

namespace vkspec::ops {

MatmulTiles matmul_tiles(const DeviceCaps& caps) {
  // llvmpipe (2 cores, 8 lanes): storage-buffer loads cost per lane, so the broadcast kernel
  // (weights by texel fetch, activations shared by broadcast) with big register tiles wins
  // (docs/perf.md); 16 weight rows per lane when decoding, 8/12/16 activation rows per tile
  // otherwise (matmul.cpp picks the one that pads least).
  static constexpr MatmulTiles kCpu{"cpu", 8, 64, 4, 64, 4, 8, 2, 2, 16, 16, 16, 32, 8};
  // GPUs: coalesced K-split GEMV, many small workgroups in flight, up to 80 rows (verification
  // windows up to 32 with CFG). On an H200 the cooperative-matrix kernel costs about 0.25 ms a call
  // from 32 to 256 rows; the GEMV's cost grows with the rows: LlamaGen-XL forwards of 34 / 66 /
  // 130 rows took 39.0 / 43.2 / 46.1 ms with the cooperative matrix and 17.5 / 35.8 / 68.7 with
  // the GEMV (docs/perf.md). No broadcast kernel (it makes every lane stream its own weight rows,
  // which defeats coalescing).
  static constexpr MatmulTiles kNvidia{"nvidia", 80, 128, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0};
  static constexpr MatmulTiles kAmd{"amd", 80, 256, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0};
  static constexpr MatmulTiles kDefault{"default", 80, 128, 2, 64, 4, 4, 2, 2, 0, 0, 0, 0, 0};
  if (caps.cpu_driver) return kCpu;
  if (caps.vendor_id == 0x10de) return kNvidia;
  if (caps.vendor_id == 0x1002) return kAmd;
  return kDefault;
}

}  // namespace vkspec::ops
