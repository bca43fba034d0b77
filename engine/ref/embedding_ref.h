#pragma once
// CPU reference for embedding (tests and --check modes only).
#include <cstdint>
#include <vector>

namespace vkspec::ref {

// table: [vocab, dim] row-major; ids clamped into [0, vocab - 1] like the shader. Returns [ids, dim].
std::vector<float> embedding(const std::vector<float>& table, int64_t vocab, int64_t dim,
                             const std::vector<int64_t>& ids);

}  // namespace vkspec::ref
