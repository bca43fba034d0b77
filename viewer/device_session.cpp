#include "viewer/device_session.h"

#include "frontend/device_choice.h"
#include "viewer/gui.h"

namespace vkspec::viewer {

DeviceSession::DeviceSession(const ViewerOptions& options, GlfwLibrary& glfw) {
  InstanceOptions io = InstanceOptions::from_environment();
  io.extensions = glfw.instance_extensions();
  instance_ = std::make_shared<Instance>(io);
  load_imgui_vulkan_functions(instance_->handle());
  window_ = std::make_unique<Window>(instance_, options.width, options.height, options.kiosk, "vkspec viewer");
  frontend::DeviceRequest request;
  request.instance = instance_;
  request.options.device_extensions = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
  request.options.present_surface = window_->surface();
  request.options.batch_limit = options.batch_limit;
  request.try_others = true;  // another device may present when the preferred one cannot
  ctx_ = frontend::open_device(request);
}

}  // namespace vkspec::viewer
