#pragma once
// CPU reference for y = x * w^T (x [M, K], w [N, K], y [M, N], row-major f32). Tests and
// benchmarks only, never the product path.
#include <cstdint>
#include <vector>

namespace vkspec::ref {

// OpenBLAS sgemm (threads as OPENBLAS_NUM_THREADS / OMP_NUM_THREADS set them); small problems
// accumulate in double instead, where the exact answer is cheap.
std::vector<float> matmul(const std::vector<float>& x, const std::vector<float>& w, int64_t m, int64_t n, int64_t k);

// Always OpenBLAS sgemm; y holds m * n floats. What the benchmark times.
void matmul_blas(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k);

// Threads OpenBLAS runs with (for benchmark reports).
int blas_threads();

}  // namespace vkspec::ref
