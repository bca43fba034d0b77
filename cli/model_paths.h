#pragma once
// Where the shipped models live: $VKSPEC_ASSETS, else the source tree's assets/ (baked in at
// build time), so the binary works from any directory.
#include <string>

namespace vkspec::cli {

std::string asset_dir();
// asset_dir()/name, or throws Error saying the shipped model is missing and how to pass one.
std::string shipped_model(const std::string& name, const std::string& option);

}  // namespace vkspec::cli
