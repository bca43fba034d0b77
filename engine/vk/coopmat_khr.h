#pragma once
// VK_KHR_cooperative_matrix for the cooperative-matrix kernels, which are written for
// GL_NV_cooperative_matrix: Debian 12's glslang (12.0) cannot compile GL_KHR_cooperative_matrix,
// and its Vulkan headers (1.3.239) predate the extension, so both the SPIR-V and the API structs
// are made here.
//
// coopmat_nv_to_khr rewrites a module's SPV_NV_cooperative_matrix instructions into their
// SPV_KHR_cooperative_matrix forms: the capability and extension; each matrix type gains its use
// (A, B or accumulator, read off the OpCooperativeMatrixMulAddNV instructions, so A and B need
// types of their own: matmul_coopmat.comp gives B's dimensions a specialization constant of the
// same value); loads and stores take a memory layout (row or column major) in place of NV's
// column-major flag, before the stride; multiply-add and length change opcode only.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <volk.h>

namespace vkspec {

// Throws Error naming `shader` where the module uses a matrix type in two roles, or a role that
// cannot be read off its multiply-adds.
std::vector<uint32_t> coopmat_nv_to_khr(const std::string& shader, const uint32_t* words, size_t word_count);

// The extension's API, as its registry entry defines it.
constexpr VkStructureType kCoopmatKhrFeaturesType = static_cast<VkStructureType>(1000506000);
constexpr VkStructureType kCoopmatKhrPropertiesType = static_cast<VkStructureType>(1000506001);
struct CoopmatKhrFeatures {
  VkStructureType sType = kCoopmatKhrFeaturesType;
  void* pNext = nullptr;
  VkBool32 cooperativeMatrix = VK_FALSE;
  VkBool32 cooperativeMatrixRobustBufferAccess = VK_FALSE;
};
struct CoopmatKhrProperties {
  VkStructureType sType = kCoopmatKhrPropertiesType;
  void* pNext = nullptr;
  uint32_t MSize = 0, NSize = 0, KSize = 0;
  uint32_t AType = 0, BType = 0, CType = 0, ResultType = 0;  // VkComponentTypeKHR: 0 f16, 1 f32
  VkBool32 saturatingAccumulation = VK_FALSE;
  uint32_t scope = 0;  // VkScopeKHR: 3 subgroup
};

// 16x16x16 f16 x f16 + f32 -> f32 subgroup fragments among the device's KHR shapes (the query is
// not in the packaged headers: it is looked up on the instance volk loaded).
bool has_coopmat_khr_16x16x16_f16(VkPhysicalDevice pd);

}  // namespace vkspec
