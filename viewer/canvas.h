#pragma once
// Draws a decoded image with its token-cell overlays inside the ImGui layout. The image and the
// cell state are textures; the quad is drawn by viewer/shaders/canvas.{vert,frag} from an ImGui
// draw callback, so ImGui windows stack correctly over and under it.
#include <cstdint>
#include <vector>

#include <imgui.h>
#include <volk.h>

#include "engine/vk/context.h"
#include "viewer/cell_overlay.h"
#include "viewer/overlay_settings.h"
#include "viewer/run_record.h"

namespace vkspec::viewer {

// The pipeline and sampler every canvas shares.
class CanvasRenderer {
 public:
  CanvasRenderer(Context& ctx, VkRenderPass render_pass);
  ~CanvasRenderer();
  CanvasRenderer(const CanvasRenderer&) = delete;
  CanvasRenderer& operator=(const CanvasRenderer&) = delete;

  // The command buffer and framebuffer the draw callbacks of this frame record into.
  void set_target(VkCommandBuffer cmd, VkExtent2D extent) { cmd_ = cmd, extent_ = extent; }

 private:
  friend class Canvas;
  Context& ctx_;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkSampler sampler_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkExtent2D extent_{};
};

class Canvas {
 public:
  Canvas(Context& ctx, CanvasRenderer& renderer);
  ~Canvas();
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  // New content, uploaded by the next record_uploads().
  void set(const DecodedImage& image, const CellOverlay& cells);
  // Shows the placeholder until the next set() (the textures stay for reuse).
  void clear() { visible_ = pending_ = false; }
  bool has_content() const { return visible_; }
  // Before the render pass: copies pending content into the textures. frame_number: frames begun
  // so far; frames up to frame_number - frames_in_flight are known to be complete.
  void record_uploads(VkCommandBuffer cmd, uint32_t slot, uint64_t frame_number, uint32_t frames_in_flight);
  // Adds the canvas over [p0, p1) (screen pixels) to the draw list.
  void draw(ImDrawList* list, ImVec2 p0, ImVec2 p1, const OverlaySettings& overlays);

 private:
  struct Texture {
    VkImage image = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    uint32_t width = 0, height = 0;
    VkFormat format = VK_FORMAT_UNDEFINED;
    bool initialised = false;
  };
  struct Retired {
    Texture texture;
    uint64_t frame;
  };
  Texture make_texture(uint32_t w, uint32_t h, VkFormat format);
  void destroy(Texture& t);
  void ensure(Texture& t, uint32_t w, uint32_t h, VkFormat format, uint64_t frame);
  void copy_into(VkCommandBuffer cmd, Texture& t, VkBuffer buffer, VkDeviceSize offset);
  static void on_draw(const ImDrawList* list, const ImDrawCmd* cmd);
  void record_draw(const ImVec4& clip);

  Context& ctx_;
  CanvasRenderer& renderer_;
  Texture image_, cells_, tree_cells_;  // cells_: CellOverlay::texels, tree_cells_: its tree_texels
  std::vector<Retired> retired_;
  std::vector<Buffer> staging_;  // one per frame in flight
  bool pending_ = false, visible_ = false;
  DecodedImage pending_image_;
  CellOverlay pending_cells_;
  // This frame's placement and settings, read by the draw callback.
  ImVec2 p0_{}, p1_{};
  OverlaySettings overlays_;
  int64_t grid_ = 0;
  uint32_t tree_depth_max_ = 0;
};

}  // namespace vkspec::viewer
