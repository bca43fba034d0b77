#pragma once
// The GLFW window and its Vulkan surface. GLFW itself is initialised once per process (GlfwLibrary).
#include <memory>
#include <string>
#include <vector>

#include "engine/vk/instance.h"

struct GLFWwindow;

namespace vkspec::viewer {

class GlfwLibrary {
 public:
  GlfwLibrary();  // throws Error when there is no display or no Vulkan support in GLFW
  ~GlfwLibrary();
  GlfwLibrary(const GlfwLibrary&) = delete;
  GlfwLibrary& operator=(const GlfwLibrary&) = delete;
  // The instance extensions a window surface needs.
  std::vector<std::string> instance_extensions() const;
};

class Window {
 public:
  // fullscreen: borderless, the size of the primary monitor (width/height ignored).
  Window(std::shared_ptr<Instance> instance, int width, int height, bool fullscreen, const std::string& title);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  GLFWwindow* handle() const { return window_; }
  VkSurfaceKHR surface() const { return surface_; }
  bool should_close() const;
  void request_close();
  // Framebuffer size in pixels (0 x 0 while minimised).
  VkExtent2D framebuffer_size() const;

 private:
  std::shared_ptr<Instance> instance_;
  GLFWwindow* window_ = nullptr;
  VkSurfaceKHR surface_ = VK_NULL_HANDLE;
};

}  // namespace vkspec::viewer
