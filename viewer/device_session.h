#pragma once
// The viewer's Vulkan side that outlives every run: the instance (with the window system's
// extensions), the window with its surface, and the one device that computes and presents.
#include <memory>

#include "engine/vk/context.h"
#include "viewer/viewer_options.h"
#include "viewer/window.h"

namespace vkspec::viewer {

class DeviceSession {
 public:
  DeviceSession(const ViewerOptions& options, GlfwLibrary& glfw);
  DeviceSession(const DeviceSession&) = delete;
  DeviceSession& operator=(const DeviceSession&) = delete;

  Instance& instance() { return *instance_; }
  Window& window() { return *window_; }
  Context& context() { return *ctx_; }

 private:
  // Destroyed in reverse: the device, then the window's surface, then the instance.
  std::shared_ptr<Instance> instance_;
  std::unique_ptr<Window> window_;
  std::unique_ptr<Context> ctx_;
};

}  // namespace vkspec::viewer
