#pragma once
// The window's swapchain, render pass and per-frame command buffers, with frame capture (the
// presented image copied back to the host as RGB, for --screenshot and --record). Submits and
// presents on the compute context's queue under its queue mutex.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "engine/image/image.h"
#include "engine/vk/context.h"

namespace vkspec::viewer {

struct FrameTarget {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  uint32_t slot = 0;    // frame-in-flight index
  uint32_t image = 0;   // swapchain image index
  uint64_t number = 0;  // frames begun so far, this one included
  VkExtent2D extent{};
};

class Swapchain {
 public:
  static constexpr uint32_t kFramesInFlight = 2;

  Swapchain(Context& ctx, VkSurfaceKHR surface, VkExtent2D size);
  ~Swapchain();
  Swapchain(const Swapchain&) = delete;
  Swapchain& operator=(const Swapchain&) = delete;

  VkRenderPass render_pass() const { return render_pass_; }
  uint32_t image_count() const { return static_cast<uint32_t>(images_.size()); }
  uint32_t min_image_count() const { return min_images_; }
  VkExtent2D extent() const { return extent_; }
  VkFormat format() const { return format_; }
  bool can_capture() const { return can_capture_; }

  // Waits until the slot's previous frame is done (delivering its capture), then acquires an image.
  // nullopt: no frame this time (window minimised, or the swapchain was just rebuilt for `size`).
  std::optional<FrameTarget> begin_frame(VkExtent2D size);
  void begin_render_pass(const FrameTarget& f, const std::array<float, 4>& clear);
  // capture: copy the image back; it arrives through on_capture once the frame is done.
  void end_render_pass(const FrameTarget& f, bool capture);
  void submit_and_present(const FrameTarget& f);
  // Waits for every frame in flight and delivers their captures.
  void flush();

  std::function<void(uint64_t frame_number, Image image)> on_capture;

 private:
  struct Slot {
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkSemaphore acquired = VK_NULL_HANDLE;
    Buffer capture;
    VkExtent2D capture_extent{};
    uint64_t capture_frame = 0;  // 0: none pending
  };
  void create_swapchain(VkExtent2D size);
  void destroy_swapchain_images();
  void wait_slot(Slot& s);
  void deliver_capture(Slot& s);

  Context& ctx_;
  VkSurfaceKHR surface_;
  VkFormat format_ = VK_FORMAT_UNDEFINED;
  VkColorSpaceKHR color_space_ = VK_COLOR_SPACE_SRGB_NONLINEAR_KHR;
  VkRenderPass render_pass_ = VK_NULL_HANDLE;
  VkSwapchainKHR swapchain_ = VK_NULL_HANDLE;
  VkExtent2D extent_{}, requested_{};
  uint32_t min_images_ = 2;
  bool can_capture_ = false, stale_ = false;
  std::vector<VkImage> images_;
  std::vector<VkImageView> views_;
  std::vector<VkFramebuffer> framebuffers_;
  std::vector<VkSemaphore> rendered_;  // per swapchain image: presentation waits on it
  std::array<Slot, kFramesInFlight> slots_;
  uint64_t frame_number_ = 0;
};

}  // namespace vkspec::viewer
