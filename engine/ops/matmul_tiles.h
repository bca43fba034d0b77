#pragma once
// Per-device tile choices for the matmul kernels, in one place so tuning for a new vendor is one
// table row. Every row is correct on any device; the table only changes speed.
#include <cstdint>
#include <string>

#include "engine/vk/device_caps.h"

namespace vkspec::ops {

// The most activation rows one GEMV dispatch takes (its sums live in registers); more rows are
// split into dispatches of at most this many, each streaming the weights again.
inline constexpr uint32_t kGemvMaxRows = 64;

struct MatmulTiles {
  const char* name;                     // the table row, for logs and benchmarks
  uint32_t gemv_max_rows;               // M up to this takes the GEMV kernel (in dispatches of kGemvMaxRows)
  uint32_t gemv_workgroup;              // GEMV: invocations sharing one K-reduction
  uint32_t gemv_outputs;                // GEMV: weight rows per workgroup
  uint32_t gemm_workgroup;              // GEMM: invocations per workgroup
  uint32_t gemm_tm, gemm_tn;            // GEMM: outputs per invocation, rows of x by rows of w
  uint32_t coop_warps_m, coop_warps_n;  // cooperative matrix: subgroups per workgroup
  // Subgroup-broadcast kernel (matmul_bcast.comp), preferred where loads are per-lane scalar
  // loops (CPU implementations); 0 = never chosen automatically.
  uint32_t bcast_gemv_tn;               // weight rows per lane when M <= gemv_max_rows
  uint32_t bcast_tm_f16, bcast_tn_f16;  // activation rows per subgroup, weight rows per lane
  uint32_t bcast_tm_f32, bcast_tn_f32;
  // Cooperative matrix: K per shared-memory slice (a multiple of 16). Fewer, longer slices: the
  // loop's latency is what small-M GEMMs pay on GPUs.
  uint32_t coop_bk = 64;
  // Row-block GEMV (matmul_rows.comp) for GEMV-path M from rows_from: weight rows per workgroup
  // and activation rows per subgroup; 0 = the plain GEMV kernel for every M. Up to 8 rows
  // (decoding, CFG pairs, small trees) the plain kernel's one K-reduction per workgroup is the
  // one measured on GPUs.
  uint32_t rows_outputs = 0, rows_per_subgroup = 0, rows_from = 9;
  // The devices this row's numbers were measured on (docs/perf.md), or nullptr: none yet, the row
  // is a guess from another vendor's. `vkspec devices` shows it, so a user on such a device knows
  // that bench --synthetic with VKSPEC_GEMV_MAX_ROWS / VKSPEC_GEMV_ROWS_TILE may find better.
  const char* tuned_on = nullptr;
};

MatmulTiles matmul_tiles(const DeviceCaps& caps);

// One line for `vkspec devices`: the table row, its kernels by row count, where it was tuned.
std::string matmul_tiles_summary(const DeviceCaps& caps);

}  // namespace vkspec::ops
