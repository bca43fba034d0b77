#pragma once
// vkspec bench --profile's GPU time by kernel: per run, each (stage, kernel)'s calls and ms per
// image and per target forward, and its share of the run's GPU time. Only images generated in
// this process count: sample files (--samples) keep each image's time per stage, not per kernel,
// so images resumed from them and --report have no kernel table.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "decoding/generation.h"

namespace vkspec::cli {

struct KernelProfile {
  KernelTimes total;   // summed over the images
  int64_t images = 0;  // generated with profiling in this process
  int64_t nfe = 0;     // their target forwards
  void add(const Generation& g);
};

// The `top` rows of most ms, then one line for the rest; nothing without images.
void print_kernel_table(const std::string& run_label, const KernelProfile& p, size_t top = 15);
// [{stage, kernel, calls, ms}] per image, most ms first; null without images.
nlohmann::json kernel_json(const KernelProfile& p);

}  // namespace vkspec::cli
