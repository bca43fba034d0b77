#pragma once
// vkspec bench --iterations: per-iteration statistics of the Jacobi window methods
// (decoding/iteration_stats.h), as a table per visit k of a position and as JSON.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decoding/iteration_stats.h"

namespace vkspec::cli {

struct IterationRow {
  std::string method, options;
  const IterationStats* stats = nullptr;
};

void print_iteration_table(const std::vector<IterationRow>& rows);

// {images, visits: [1, 2, ..., "8+"], drafts_per_image, collision, acceptance (per visit; null
// where nothing was counted), collision_all, acceptance_all, transitions, decided}.
nlohmann::json iteration_json(const IterationStats& s);

}  // namespace vkspec::cli
