#pragma once
// Which rounding the kernels a device takes produce, for the metadata of sample files: images
// generated with different roundings are different token streams (a last-bit change of p moves
// a sample now and then, and everything after it), so `bench --samples` must not resume or
// merge them as one experiment. Bump the value of a device class when a change alters the
// rounding of a kernel it takes; "" is the rounding before these values existed (sample files
// written then carry none, and still resume where nothing changed since).
#include <string>

#include "engine/vk/device_caps.h"

namespace vkspec::ops {

inline std::string kernel_rounding(const DeviceCaps& caps) {
  // Both: 2026-11-27 (session 16), each block's norms ride in the projections after them, which
  // scale a row after its sums (ops::MatmulFusion). Before: CPU drivers "cpu-2" (attention's texel
  // path pairs a texel's two units in one lane), GPUs "gpu-2" (the row-block GEMV for 9+ rows).
  if (caps.cpu_driver) return "cpu-3";
  return "gpu-3";
}

}  // namespace vkspec::ops
