#pragma once
// CPU reference for ops::flashar_fuse (engine/ops/flashar_fuse.h): the same rows in double.
#include <cstdint>
#include <vector>

namespace vkspec::ref {

struct FlashArFused {
  std::vector<float> fused;  // [rows, vocab]
  std::vector<float> gates;  // [rows]
};

// h, v: [*, vocab]; sources: [rows, 3] (H row, V row, kind); fc1: [P, 2 vocab]; gate: [P + 1];
// joint: normalise [H; V] as one vector (ops::FlashArGateNorm::Joint), else each on its own.
FlashArFused flashar_fuse(const std::vector<float>& h, const std::vector<float>& v,
                          const std::vector<uint32_t>& sources, const std::vector<float>& fc1,
                          const std::vector<float>& gate, int64_t vocab, bool joint = false);

}  // namespace vkspec::ref
