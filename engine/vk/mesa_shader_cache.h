#pragma once
// Mesa's llvmpipe (lavapipe) keys its on-disk shader cache by the CPU's features but not by
// LP_NATIVE_VECTOR_WIDTH (Mesa 25.0.7), so machine code compiled at one vector width is loaded at
// another: a crash in JIT code or wrong results (docs/perf.md, "Lavapipe 25 at forced subgroup 4
// crashes"). Every vkspec process (the CLI, the Python module, the tests) therefore gives a forced
// width a Mesa cache folder of its own before the driver is loaded.
#include <string>

namespace vkspec {

// Where LP_NATIVE_VECTOR_WIDTH is set and MESA_SHADER_CACHE_DIR is not: sets MESA_SHADER_CACHE_DIR
// to <cache_dir>/mesa-shader-cache/width-<W> (created; Mesa 22.3 makes only the last folder), or,
// with no cache folder (VKSPEC_CACHE_DIR=off), turns Mesa's cache off (MESA_SHADER_CACHE_DISABLE).
// cache_dir: ContextOptions::cache_dir. Returns the folder set, or "" when it changed nothing or
// turned the cache off. A caller's own MESA_SHADER_CACHE_DIR is always kept.
std::string keep_forced_width_shader_cache_apart(const std::string& cache_dir);

}  // namespace vkspec
