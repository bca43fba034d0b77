#pragma once
// SPIR-V compiled from shaders/*.comp at build time, by id (shaders/shader_ids.h, generated) or
// by file name (without .comp).
#include <cstddef>
#include <cstdint>

namespace vkspec {

struct EmbeddedShader {
  const char* name;
  const uint32_t* words;
  size_t word_count;
};

// A shader's index in embedded_shaders(); the constants are in the generated shaders/shader_ids.h.
struct ShaderId {
  uint32_t index;
};

// nullptr when no shader of that name was built.
const EmbeddedShader* find_embedded_shader(const char* name);
// All shaders, terminated by an entry whose name is nullptr.
const EmbeddedShader* embedded_shaders();
size_t embedded_shader_count();
const EmbeddedShader& embedded_shader(ShaderId id);

}  // namespace vkspec
