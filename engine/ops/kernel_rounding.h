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
  // CPU drivers: 2026-11-27, attention's texel path pairs a texel's two units in one lane.
  if (caps.cpu_driver) return "cpu-2";
  // GPUs: 2026-11-27, verification windows (9+ rows) take the row-block GEMV, which sums each
  // output within one subgroup.
  return "gpu-2";
}

}  // namespace vkspec::ops
