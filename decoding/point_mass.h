#pragma once
// Draft distributions that are a point mass on the draft (a guess copied from a neighbour, an
// upsampled token): q row = 0 everywhere but 1 at the token. Shared by the Jacobi windows'
// left/above initialisation and MuLo-SD's coupled resampling. For tokens known only on the device,
// ops::point_masses (engine/ops/draft_tokens.h) writes the rows in one dispatch.
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/vk/command_stream.h"

namespace vkspec {

// Records the fills that make row r of q [N, V] a point mass on token t, for each (r, t): all
// rows are zeroed first and the ones written after, so the stream needs one barrier, not one per row.
void record_point_masses(CommandStream& s, const Tensor& q, const std::vector<std::pair<int64_t, uint32_t>>& rows);

}  // namespace vkspec
