#pragma once
// Dear ImGui on the viewer's window: the GLFW platform backend from Debian's libimgui.a and the
// Vulkan renderer backend compiled from its source with IMGUI_IMPL_VULKAN_NO_PROTOTYPES, so it
// calls Vulkan through the pointers volk loaded rather than the prebuilt library's direct calls.
#include <volk.h>

#include "engine/vk/context.h"

struct GLFWwindow;

namespace vkspec::viewer {

class Swapchain;

// Points the ImGui Vulkan backend at `instance`; call right after creating the instance.
void load_imgui_vulkan_functions(VkInstance instance);

class Gui {
 public:
  Gui(GLFWwindow* window, Context& ctx, const Swapchain& swapchain);
  ~Gui();
  Gui(const Gui&) = delete;
  Gui& operator=(const Gui&) = delete;

  void new_frame();
  // ImGui::Render(); the draw data is recorded by record().
  void end_frame();
  void record(VkCommandBuffer cmd);
  void set_min_image_count(uint32_t n);

 private:
  Context& ctx_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  bool glfw_ = false, vulkan_ = false;
};

}  // namespace vkspec::viewer
