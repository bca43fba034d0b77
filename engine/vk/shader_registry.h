#pragma once
// SPIR-V compiled from shaders/*.comp at build time, looked up by file name (without .comp).
#include <cstddef>
#include <cstdint>

namespace vkspec {

struct EmbeddedShader {
  const char* name;
  const uint32_t* words;
  size_t word_count;
};

// nullptr when no shader of that name was built.
const EmbeddedShader* find_embedded_shader(const char* name);
// All shaders, terminated by an entry whose name is nullptr.
const EmbeddedShader* embedded_shaders();

}  // namespace vkspec
