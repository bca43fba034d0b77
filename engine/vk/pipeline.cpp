#include "engine/vk/pipeline.h"

#include <algorithm>

#include <spirv_cross.hpp>

#include "engine/vk/coopmat_khr.h"
#include "engine/vk/vulkan_error.h"
#include "engine/vk/shader_registry.h"

namespace vkspec {

namespace {

// The packaged SPIRV-Cross predates SPV_NV_cooperative_matrix and rejects its type declaration.
// Reflection only looks at the interface, which never contains such a type, so a copy for
// reflection declares each cooperative-matrix type as a struct of four components instead.
std::vector<uint32_t> reflectable_words(const uint32_t* words, size_t word_count) {
  std::vector<uint32_t> w(words, words + word_count);
  for (size_t i = 5; i < w.size();) {
    const uint32_t count = w[i] >> 16, op = w[i] & 0xffff;
    if (count == 0) break;  // malformed; let SPIRV-Cross report it
    if (op == spv::OpTypeCooperativeMatrixNV && count == 6 && i + 6 <= w.size()) {
      w[i] = (6u << 16) | spv::OpTypeStruct;
      w[i + 3] = w[i + 4] = w[i + 5] = w[i + 2];  // members: the component type
    }
    i += count;
  }
  return w;
}

// Whether the module declares the CooperativeMatrixNV capability.
bool uses_coopmat_nv(const uint32_t* words, size_t word_count) {
  for (size_t i = 5; i < word_count;) {
    const uint32_t count = words[i] >> 16, op = words[i] & 0xffff;
    if (count == 0) return false;
    if (op == spv::OpCapability && count == 2 && i + 1 < word_count &&
        words[i + 1] == spv::CapabilityCooperativeMatrixNV)
      return true;
    if (op != spv::OpCapability && op != spv::OpExtension && i > 5) return false;  // capabilities come first
    i += count;
  }
  return false;
}

}  // namespace

ShaderReflection reflect_shader(const std::string& name, const uint32_t* words, size_t word_count) {
  ShaderReflection r;
  try {
    spirv_cross::Compiler comp(reflectable_words(words, word_count));
    const spirv_cross::ShaderResources res = comp.get_shader_resources();
    if (!res.uniform_buffers.empty() || !res.storage_images.empty() || !res.sampled_images.empty() ||
        !res.separate_samplers.empty())
      throw Error("shader " + name + ": only storage buffers, uniform texel buffers and push constants are supported");
    auto binding_of = [&](const spirv_cross::Resource& res_, const char* kind) {
      if (comp.get_decoration(res_.id, spv::DecorationDescriptorSet) != 0)
        throw Error("shader " + name + ": " + kind + " " + res_.name + " is not in descriptor set 0");
      PipelineBinding b;
      b.binding = comp.get_decoration(res_.id, spv::DecorationBinding);
      return b;
    };
    for (const auto& sb : res.storage_buffers) {
      PipelineBinding b = binding_of(sb, "storage buffer");
      const spirv_cross::Bitset flags = comp.get_buffer_block_flags(sb.id);
      b.writes = !flags.get(spv::DecorationNonWritable);
      b.reads = !flags.get(spv::DecorationNonReadable);
      r.bindings.push_back(b);
    }
    // GLSL's textureBuffer (samplerless, GL_EXT_samplerless_texture_functions): a uniform texel
    // buffer. Not samplerBuffer: SPIR-V 1.6 (Vulkan 1.3 and later) forbids a sampled image of a
    // buffer, which the validation layer reports on such devices.
    for (const auto& si : res.separate_images) {
      if (comp.get_type(si.type_id).image.dim != spv::DimBuffer)
        throw Error("shader " + name + ": image " + si.name + " is not a texel buffer");
      PipelineBinding b = binding_of(si, "texel buffer");
      b.writes = false;
      b.texels = true;
      r.bindings.push_back(b);
    }
    std::sort(r.bindings.begin(), r.bindings.end(),
              [](const PipelineBinding& a, const PipelineBinding& b) { return a.binding < b.binding; });
    for (size_t i = 0; i < r.bindings.size(); ++i)
      if (r.bindings[i].binding != i)
        throw Error("shader " + name + ": bindings must be dense from 0 (missing " + std::to_string(i) + ")");
    if (!res.push_constant_buffers.empty()) {
      const auto& pc = res.push_constant_buffers[0];
      r.push_constant_size = static_cast<uint32_t>(comp.get_declared_struct_size(comp.get_type(pc.base_type_id)));
    }
    for (const auto& sc : comp.get_specialization_constants()) {
      r.spec_ids.push_back(sc.constant_id);
      r.spec_defaults.push_back(comp.get_constant(sc.id).scalar());
    }
    spirv_cross::SpecializationConstant wg[3];
    comp.get_work_group_size_specialization_constants(wg[0], wg[1], wg[2]);
    for (int i = 0; i < 3; ++i) {
      r.local_size[i] = comp.get_execution_mode_argument(spv::ExecutionModeLocalSize, static_cast<uint32_t>(i));
      if (wg[i].id) {
        r.local_size_spec_id[i] = static_cast<int32_t>(wg[i].constant_id);
        r.local_size[i] = comp.get_constant(wg[i].id).scalar();
      }
    }
    for (spv::Capability c : comp.get_declared_capabilities())
      r.subgroup_ops |= c >= spv::CapabilityGroupNonUniform && c <= spv::CapabilityGroupNonUniformQuad;
  } catch (const spirv_cross::CompilerError& e) {
    throw Error("shader " + name + ": SPIR-V reflection failed: " + e.what());
  }
  return r;
}

Pipeline::Pipeline(VkDevice device, VkPipelineCache cache, ShaderId id, const SpecConstants& spec,
                   uint32_t full_subgroup_size, bool push_descriptors, bool coopmat_khr)
    : device_(device), name_(embedded_shader(id).name) {
  const EmbeddedShader& shader = embedded_shader(id);
  const std::string& name = name_;
  reflection_ = reflect_shader(name, shader.words, shader.word_count);

  std::vector<VkSpecializationMapEntry> entries;
  std::vector<uint32_t> values;
  for (size_t i = 0; i < reflection_.spec_ids.size(); ++i) {
    const uint32_t id = reflection_.spec_ids[i];
    if (id >= spec.size()) continue;
    entries.push_back({id, static_cast<uint32_t>(values.size() * 4), 4});
    values.push_back(spec[id]);
  }
  for (size_t id = 0; id < spec.size(); ++id)
    if (std::find(reflection_.spec_ids.begin(), reflection_.spec_ids.end(), id) == reflection_.spec_ids.end())
      throw Error("shader " + name + " has no specialization constant " + std::to_string(id));
  for (int a = 0; a < 3; ++a) {
    local_size_[a] = reflection_.local_size[a];
    const int32_t sid = reflection_.local_size_spec_id[a];
    if (sid >= 0 && static_cast<size_t>(sid) < spec.size()) local_size_[a] = spec[static_cast<size_t>(sid)];
  }
  full_subgroups_ = full_subgroup_size && reflection_.subgroup_ops && local_size_[0] % full_subgroup_size == 0;

  // Reflection reads the NV form (the packaged SPIRV-Cross knows neither), the device gets KHR.
  const std::vector<uint32_t> khr = coopmat_khr && uses_coopmat_nv(shader.words, shader.word_count)
                                        ? coopmat_nv_to_khr(name, shader.words, shader.word_count)
                                        : std::vector<uint32_t>();
  try {
    if (!khr.empty())
      create(khr.data(), khr.size(), cache, entries, values, full_subgroups_, push_descriptors);
    else
      create(shader.words, shader.word_count, cache, entries, values, full_subgroups_, push_descriptors);
  } catch (...) {
    destroy();
    throw;
  }
}

void Pipeline::create(const uint32_t* words, size_t word_count, VkPipelineCache cache,
                      const std::vector<VkSpecializationMapEntry>& entries, const std::vector<uint32_t>& values,
                      bool full_subgroups, bool push_descriptors) {
  const std::string& name = name_;
  VkDevice device = device_;
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = word_count * 4;
  mi.pCode = words;
  vk_check(vkCreateShaderModule(device, &mi, nullptr, &module_), ("vkCreateShaderModule " + name).c_str());

  std::vector<VkDescriptorSetLayoutBinding> lb;
  for (const auto& b : reflection_.bindings)
    lb.push_back({b.binding, b.texels ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                  VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  if (push_descriptors) dl.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  dl.bindingCount = static_cast<uint32_t>(lb.size());
  dl.pBindings = lb.data();
  vk_check(vkCreateDescriptorSetLayout(device, &dl, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");

  VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, reflection_.push_constant_size};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &set_layout_;
  pl.pushConstantRangeCount = reflection_.push_constant_size ? 1 : 0;
  pl.pPushConstantRanges = &pcr;
  vk_check(vkCreatePipelineLayout(device, &pl, nullptr, &layout_), "vkCreatePipelineLayout");

  VkSpecializationInfo si{};
  si.mapEntryCount = static_cast<uint32_t>(entries.size());
  si.pMapEntries = entries.data();
  si.dataSize = values.size() * 4;
  si.pData = values.data();

  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module_;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = entries.empty() ? nullptr : &si;
  // No varying-size flag and no required size: the subgroups are subgroupSize wide, all live.
  if (full_subgroups) ci.stage.flags = VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT;
  ci.layout = layout_;
  vk_check(vkCreateComputePipelines(device, cache, 1, &ci, nullptr, &pipeline_),
           ("vkCreateComputePipelines " + name).c_str());
}

Pipeline::~Pipeline() { destroy(); }

void Pipeline::destroy() {
  if (pipeline_) vkDestroyPipeline(device_, pipeline_, nullptr);
  if (layout_) vkDestroyPipelineLayout(device_, layout_, nullptr);
  if (set_layout_) vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
  if (module_) vkDestroyShaderModule(device_, module_, nullptr);
}

}  // namespace vkspec
