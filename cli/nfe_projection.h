#pragma once
// Images per second a decoding method would reach with a model whose forwards cost what was just
// measured: the forwards per image (NFE) the shipped model needed in `vkspec bench --json` runs,
// times the measured cost of a forward with that method's number of queries. A projection, not a
// measurement: the NFE come from another model, and drafting and acceptance kernels are not
// counted.
#include <cstdint>
#include <string>
#include <vector>

namespace vkspec::cli {

struct ForwardCost {
  int64_t queries = 0;  // per batch row
  double ms = 0;
};

struct ProjectedMethod {
  std::string method, options, source;  // options as "window=16"; source: the JSON file
  int64_t images = 0;                   // images behind the NFE mean
  double nfe = 0;                       // per image, scaled to the benchmark's grid
  int64_t queries = 0;                  // per forward (window methods: window + 1, the most they run)
  double ms_per_forward = 0, images_per_s = 0;
};

// ms at `queries`, linear between measured points; up to 25 % past the largest one (a window-64
// method runs 65 queries) from the last two. -1 outside that range or when the line goes below 0.
double interpolate_ms(std::vector<ForwardCost> costs, double queries);

// Methods of `files` whose forwards have a known query count (StrategyDescriptor::fixed_queries:
// ar 1, the window methods with Jacobi drafts window + 1). NFE are scaled by image_tokens /
// (the run's tokens per image). Results of other methods, and of windows beyond the measured
// ones, are named in *skipped. Throws Error for
// a file that cannot be read or parsed.
std::vector<ProjectedMethod> project_methods(const std::vector<std::string>& files, int64_t image_tokens,
                                             const std::vector<ForwardCost>& costs, std::vector<std::string>* skipped);

}  // namespace vkspec::cli
