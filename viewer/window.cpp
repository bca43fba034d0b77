#include "viewer/window.h"

#include "common/env.h"
#include "engine/vk/vulkan_error.h"

// After volk (through window.h): vulkan.h comes in without prototypes, and GLFW declares
// glfwCreateWindowSurface.
#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

namespace vkspec::viewer {

GlfwLibrary::GlfwLibrary() {
  if (!glfwInit()) {
    const char* desc = nullptr;
    glfwGetError(&desc);
    const auto display = env::external("DISPLAY");
    throw Error(std::string("cannot open a window: ") + (desc ? desc : "glfwInit failed") +
                (display ? "" : " (DISPLAY is not set; on a headless machine run under xvfb-run)"));
  }
  if (!glfwVulkanSupported()) {
    glfwTerminate();
    throw Error("GLFW finds no Vulkan loader (libvulkan.so.1)");
  }
}

GlfwLibrary::~GlfwLibrary() { glfwTerminate(); }

std::vector<std::string> GlfwLibrary::instance_extensions() const {
  uint32_t n = 0;
  const char** names = glfwGetRequiredInstanceExtensions(&n);
  if (!names) throw Error("GLFW cannot create Vulkan surfaces on this display");
  return std::vector<std::string>(names, names + n);
}

Window::Window(std::shared_ptr<Instance> instance, int width, int height, bool fullscreen, const std::string& title)
    : instance_(std::move(instance)) {
  glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
  GLFWmonitor* monitor = nullptr;
  if (fullscreen) {
    // The monitor's current mode: no mode switch, so it also works on Xvfb.
    monitor = glfwGetPrimaryMonitor();
    if (const GLFWvidmode* mode = monitor ? glfwGetVideoMode(monitor) : nullptr) {
      width = mode->width;
      height = mode->height;
      glfwWindowHint(GLFW_REFRESH_RATE, mode->refreshRate);
    } else {
      monitor = nullptr;
      glfwWindowHint(GLFW_DECORATED, GLFW_FALSE);
    }
  }
  window_ = glfwCreateWindow(width, height, title.c_str(), monitor, nullptr);
  if (!window_) {
    const char* desc = nullptr;
    glfwGetError(&desc);
    throw Error(std::string("cannot create a ") + std::to_string(width) + "x" + std::to_string(height) +
                " window: " + (desc ? desc : "unknown GLFW error"));
  }
  const VkResult r = glfwCreateWindowSurface(instance_->handle(), window_, nullptr, &surface_);
  if (r != VK_SUCCESS) {
    glfwDestroyWindow(window_);
    throw VulkanError(r, "glfwCreateWindowSurface");
  }
}

Window::~Window() {
  if (surface_) vkDestroySurfaceKHR(instance_->handle(), surface_, nullptr);
  if (window_) glfwDestroyWindow(window_);
}

bool Window::should_close() const { return glfwWindowShouldClose(window_); }

void Window::request_close() { glfwSetWindowShouldClose(window_, GLFW_TRUE); }

VkExtent2D Window::framebuffer_size() const {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window_, &w, &h);
  return {static_cast<uint32_t>(w > 0 ? w : 0), static_cast<uint32_t>(h > 0 ? h : 0)};
}

}  // namespace vkspec::viewer
