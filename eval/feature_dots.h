#pragma once
// Dot products between the rows of two feature matrices, a block of rows at a time (OpenBLAS
// sgemm, f32): what the kernel and nearest-neighbour metrics (KID, precision and recall) are built
// on, with memory bounded by the block whatever the number of vectors.
#include <cstdint>
#include <functional>
#include <vector>

namespace vkspec {

// x [n, dim], y [m, dim] row-major. Calls visit(first, rows, dots) for consecutive blocks of x's
// rows, dots [rows, m] with dots[r * m + j] = x[first + r] . y[j].
void for_each_dot_block(const float* x, int64_t n, const float* y, int64_t m, int64_t dim,
                        const std::function<void(int64_t first, int64_t rows, const float* dots)>& visit);

// Rows of `features` [count, dim] picked by index, in that order.
std::vector<float> feature_rows(const std::vector<float>& features, int64_t dim, const std::vector<int64_t>& rows);

}  // namespace vkspec
