#include "viewer/canvas.h"

#include <algorithm>
#include <cstring>

#include "canvas_frag.h"
#include "canvas_vert.h"
#include "engine/vk/vulkan_error.h"

namespace vkspec::viewer {
namespace {

// Mirrors CanvasPush in viewer/shaders/canvas_push.glsl.
struct CanvasPush {
  float rect[4];
  int32_t grid[2];
  uint32_t flags;
  float cell_px;
  float dim;
  float fill_alpha;
  float heat_alpha;
  uint32_t tree_depth_max;
};
static_assert(sizeof(CanvasPush) == 48, "push block layout");

VkShaderModule make_module(VkDevice d, const uint32_t* words, size_t bytes, const char* name) {
  VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  ci.codeSize = bytes;
  ci.pCode = words;
  VkShaderModule m;
  vk_check(vkCreateShaderModule(d, &ci, nullptr, &m), name);
  return m;
}

}  // namespace

CanvasRenderer::CanvasRenderer(Context& ctx, VkRenderPass render_pass) : ctx_(ctx) {
  VkDevice d = ctx.device();
  // image, cells, tree cells.
  VkDescriptorSetLayoutBinding b[3] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_FRAGMENT_BIT;
  }
  VkDescriptorSetLayoutCreateInfo sl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sl.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  sl.bindingCount = 3;
  sl.pBindings = b;
  vk_check(vkCreateDescriptorSetLayout(d, &sl, nullptr, &set_layout_), "vkCreateDescriptorSetLayout (canvas)");
  VkPushConstantRange range{VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(CanvasPush)};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &set_layout_;
  pl.pushConstantRangeCount = 1;
  pl.pPushConstantRanges = &range;
  vk_check(vkCreatePipelineLayout(d, &pl, nullptr, &layout_), "vkCreatePipelineLayout (canvas)");

  VkShaderModule vs = make_module(d, spv_canvas_vert, sizeof(spv_canvas_vert), "vkCreateShaderModule (canvas.vert)");
  VkShaderModule fs = make_module(d, spv_canvas_frag, sizeof(spv_canvas_frag), "vkCreateShaderModule (canvas.frag)");
  VkPipelineShaderStageCreateInfo stages[2] = {{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO},
                                               {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO}};
  stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
  stages[0].module = vs;
  stages[0].pName = "main";
  stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
  stages[1].module = fs;
  stages[1].pName = "main";
  VkPipelineVertexInputStateCreateInfo vi{VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  VkPipelineInputAssemblyStateCreateInfo ia{VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  ia.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_STRIP;
  VkPipelineViewportStateCreateInfo vp{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  vp.viewportCount = 1;
  vp.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo rs{VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  rs.polygonMode = VK_POLYGON_MODE_FILL;
  rs.cullMode = VK_CULL_MODE_NONE;
  rs.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
  rs.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo ms{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  ms.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineColorBlendAttachmentState att{};
  att.colorWriteMask =
      VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  VkPipelineColorBlendStateCreateInfo cb{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  cb.attachmentCount = 1;
  cb.pAttachments = &att;
  const VkDynamicState dyn[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo ds{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
  ds.dynamicStateCount = 2;
  ds.pDynamicStates = dyn;
  VkGraphicsPipelineCreateInfo pi{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
  pi.stageCount = 2;
  pi.pStages = stages;
  pi.pVertexInputState = &vi;
  pi.pInputAssemblyState = &ia;
  pi.pViewportState = &vp;
  pi.pRasterizationState = &rs;
  pi.pMultisampleState = &ms;
  pi.pColorBlendState = &cb;
  pi.pDynamicState = &ds;
  pi.layout = layout_;
  pi.renderPass = render_pass;
  const VkResult r = vkCreateGraphicsPipelines(d, VK_NULL_HANDLE, 1, &pi, nullptr, &pipeline_);
  vkDestroyShaderModule(d, vs, nullptr);
  vkDestroyShaderModule(d, fs, nullptr);
  vk_check(r, "vkCreateGraphicsPipelines (canvas)");

  VkSamplerCreateInfo si{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
  si.magFilter = si.minFilter = VK_FILTER_NEAREST;
  si.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
  si.addressModeU = si.addressModeV = si.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  si.maxLod = 0.0f;
  vk_check(vkCreateSampler(d, &si, nullptr, &sampler_), "vkCreateSampler (canvas)");
}

CanvasRenderer::~CanvasRenderer() {
  VkDevice d = ctx_.device();
  vkDestroySampler(d, sampler_, nullptr);
  vkDestroyPipeline(d, pipeline_, nullptr);
  vkDestroyPipelineLayout(d, layout_, nullptr);
  vkDestroyDescriptorSetLayout(d, set_layout_, nullptr);
}

Canvas::Canvas(Context& ctx, CanvasRenderer& renderer) : ctx_(ctx), renderer_(renderer) {}

Canvas::~Canvas() {
  // The owner waits for the queue before destroying canvases.
  destroy(image_);
  destroy(cells_);
  destroy(tree_cells_);
  for (Retired& r : retired_) destroy(r.texture);
}

void Canvas::set(const DecodedImage& image, const CellOverlay& cells) {
  if (image.width <= 0 || image.height <= 0 || image.rgba.size() != static_cast<size_t>(image.width) * image.height * 4)
    throw Error("canvas: malformed image " + std::to_string(image.width) + "x" + std::to_string(image.height));
  const size_t texels = static_cast<size_t>(cells.grid * cells.grid) * 4;
  if (cells.grid <= 0 || cells.texels.size() != texels || cells.tree_texels.size() != texels)
    throw Error("canvas: malformed cell overlay for a " + std::to_string(cells.grid) + "-cell grid");
  pending_image_ = image;
  pending_cells_ = cells;
  pending_ = visible_ = true;
}

Canvas::Texture Canvas::make_texture(uint32_t w, uint32_t h, VkFormat format) {
  VkDevice d = ctx_.device();
  Texture t;
  t.width = w;
  t.height = h;
  t.format = format;
  VkImageCreateInfo ci{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  ci.imageType = VK_IMAGE_TYPE_2D;
  ci.format = format;
  ci.extent = {w, h, 1};
  ci.mipLevels = 1;
  ci.arrayLayers = 1;
  ci.samples = VK_SAMPLE_COUNT_1_BIT;
  ci.tiling = VK_IMAGE_TILING_OPTIMAL;
  ci.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_SAMPLED_BIT;
  ci.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  vk_check(vkCreateImage(d, &ci, nullptr, &t.image), "vkCreateImage (canvas)");
  try {
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(d, t.image, &req);
    VkPhysicalDeviceMemoryProperties props;
    vkGetPhysicalDeviceMemoryProperties(ctx_.physical_device(), &props);
    uint32_t type = UINT32_MAX;
    for (VkMemoryPropertyFlags want :
         {VkMemoryPropertyFlags{VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT}, VkMemoryPropertyFlags{0}})
      for (uint32_t i = 0; i < props.memoryTypeCount && type == UINT32_MAX; ++i)
        if ((req.memoryTypeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) type = i;
    if (type == UINT32_MAX) throw Error("no memory type can hold the canvas texture");
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    vk_check(vkAllocateMemory(d, &ai, nullptr, &t.memory), "vkAllocateMemory (canvas)");
    vk_check(vkBindImageMemory(d, t.image, t.memory, 0), "vkBindImageMemory (canvas)");
    VkImageViewCreateInfo vi{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vi.image = t.image;
    vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vi.format = format;
    vi.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vk_check(vkCreateImageView(d, &vi, nullptr, &t.view), "vkCreateImageView (canvas)");
  } catch (...) {
    destroy(t);
    throw;
  }
  return t;
}

void Canvas::destroy(Texture& t) {
  VkDevice d = ctx_.device();
  if (t.view) vkDestroyImageView(d, t.view, nullptr);
  if (t.image) vkDestroyImage(d, t.image, nullptr);
  if (t.memory) vkFreeMemory(d, t.memory, nullptr);
  t = Texture{};
}

void Canvas::ensure(Texture& t, uint32_t w, uint32_t h, VkFormat format, uint64_t frame) {
  if (t.image && t.width == w && t.height == h && t.format == format) return;
  // Earlier frames may still sample the old texture: retire it until they are done.
  if (t.image) retired_.push_back({t, frame});
  t = Texture{};
  t = make_texture(w, h, format);
}

void Canvas::copy_into(VkCommandBuffer cmd, Texture& t, VkBuffer buffer, VkDeviceSize offset) {
  VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  b.srcAccessMask = 0;  // write-after-read of earlier frames: an execution dependency suffices
  b.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  b.oldLayout = t.initialised ? VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL : VK_IMAGE_LAYOUT_UNDEFINED;
  b.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = t.image;
  b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  vkCmdPipelineBarrier(cmd, t.initialised ? VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT : VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0, nullptr, 1, &b);
  VkBufferImageCopy region{};
  region.bufferOffset = offset;
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = {t.width, t.height, 1};
  vkCmdCopyBufferToImage(cmd, buffer, t.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
  b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
  b.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  b.newLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
  vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, 0, 0, nullptr, 0,
                       nullptr, 1, &b);
  t.initialised = true;
}

void Canvas::record_uploads(VkCommandBuffer cmd, uint32_t slot, uint64_t frame_number, uint32_t frames_in_flight) {
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(),
                                [&](Retired& r) {
                                  if (frame_number < r.frame + frames_in_flight) return false;
                                  destroy(r.texture);
                                  return true;
                                }),
                 retired_.end());
  if (!pending_) return;
  const uint32_t W = static_cast<uint32_t>(pending_image_.width), H = static_cast<uint32_t>(pending_image_.height);
  const uint32_t G = static_cast<uint32_t>(pending_cells_.grid);
  ensure(image_, W, H, VK_FORMAT_R8G8B8A8_UNORM, frame_number);
  ensure(cells_, G, G, VK_FORMAT_R8G8B8A8_UINT, frame_number);
  ensure(tree_cells_, G, G, VK_FORMAT_R8G8B8A8_UINT, frame_number);

  const VkDeviceSize image_bytes = pending_image_.rgba.size(), cells_bytes = pending_cells_.texels.size();
  const VkDeviceSize cells_offset = (image_bytes + 15) & ~VkDeviceSize{15};
  const VkDeviceSize tree_offset = (cells_offset + cells_bytes + 15) & ~VkDeviceSize{15};
  const VkDeviceSize total = tree_offset + pending_cells_.tree_texels.size();
  if (staging_.size() < frames_in_flight) staging_.resize(frames_in_flight);
  Buffer& st = staging_[slot];
  if (!st.valid() || st.size() < total)
    st = ctx_.allocator().allocate(total, MemoryUsage::Upload, "viewer canvas upload");
  auto* dst = static_cast<uint8_t*>(st.mapped());
  std::memcpy(dst, pending_image_.rgba.data(), image_bytes);
  std::memcpy(dst + cells_offset, pending_cells_.texels.data(), cells_bytes);
  std::memcpy(dst + tree_offset, pending_cells_.tree_texels.data(), pending_cells_.tree_texels.size());
  copy_into(cmd, image_, st.handle(), st.offset());
  copy_into(cmd, cells_, st.handle(), st.offset() + cells_offset);
  copy_into(cmd, tree_cells_, st.handle(), st.offset() + tree_offset);
  grid_ = pending_cells_.grid;
  tree_depth_max_ = static_cast<uint32_t>(std::max(0, pending_cells_.tree_depth_max));
  pending_ = false;
}

void Canvas::draw(ImDrawList* list, ImVec2 p0, ImVec2 p1, const OverlaySettings& overlays) {
  p0_ = p0;
  p1_ = p1;
  overlays_ = overlays;
  if (!has_content()) {
    list->AddRectFilled(p0, p1, IM_COL32(30, 30, 36, 255));
    list->AddText(ImVec2(p0.x + 8, p0.y + 8), IM_COL32(160, 160, 170, 255), "waiting for the first step");
    return;
  }
  list->AddCallback(&Canvas::on_draw, this);
  list->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

void Canvas::on_draw(const ImDrawList*, const ImDrawCmd* cmd) {
  static_cast<Canvas*>(cmd->UserCallbackData)->record_draw(cmd->ClipRect);
}

void Canvas::record_draw(const ImVec4& clip) {
  VkCommandBuffer cmd = renderer_.cmd_;
  const VkExtent2D fb = renderer_.extent_;
  if (!cmd || !image_.view || !cells_.view || !tree_cells_.view || grid_ <= 0 || fb.width == 0 || fb.height == 0)
    return;
  const float x0 = std::max({clip.x, p0_.x, 0.0f}), y0 = std::max({clip.y, p0_.y, 0.0f});
  const float x1 = std::min({clip.z, p1_.x, static_cast<float>(fb.width)});
  const float y1 = std::min({clip.w, p1_.y, static_cast<float>(fb.height)});
  if (x1 <= x0 || y1 <= y0) return;
  VkRect2D scissor{
      {static_cast<int32_t>(x0), static_cast<int32_t>(y0)},
      {static_cast<uint32_t>(x1 - static_cast<int32_t>(x0)), static_cast<uint32_t>(y1 - static_cast<int32_t>(y0))}};

  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, renderer_.pipeline_);
  VkDescriptorImageInfo infos[3] = {{renderer_.sampler_, image_.view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL},
                                    {renderer_.sampler_, cells_.view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL},
                                    {renderer_.sampler_, tree_cells_.view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL}};
  VkWriteDescriptorSet w[3] = {{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET},
                               {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET},
                               {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET}};
  for (uint32_t i = 0; i < 3; ++i) {
    w[i].dstBinding = i;
    w[i].descriptorCount = 1;
    w[i].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    w[i].pImageInfo = &infos[i];
  }
  vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, renderer_.layout_, 0, 3, w);
  VkViewport vp{0, 0, static_cast<float>(fb.width), static_cast<float>(fb.height), 0, 1};
  vkCmdSetViewport(cmd, 0, 1, &vp);
  vkCmdSetScissor(cmd, 0, 1, &scissor);
  CanvasPush push{};
  push.rect[0] = p0_.x / fb.width * 2 - 1;
  push.rect[1] = p0_.y / fb.height * 2 - 1;
  push.rect[2] = p1_.x / fb.width * 2 - 1;
  push.rect[3] = p1_.y / fb.height * 2 - 1;
  push.grid[0] = push.grid[1] = static_cast<int32_t>(grid_);
  push.flags = overlays_.show;
  push.cell_px = (p1_.x - p0_.x) / static_cast<float>(grid_);
  push.dim = overlays_.dim;
  push.fill_alpha = overlays_.fill_alpha;
  push.heat_alpha = overlays_.heat_alpha;
  push.tree_depth_max = tree_depth_max_;
  vkCmdPushConstants(cmd, renderer_.layout_, VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(push),
                     &push);
  vkCmdDraw(cmd, 4, 1, 0, 0);
}

}  // namespace vkspec::viewer
