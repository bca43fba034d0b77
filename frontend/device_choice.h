#pragma once
// The device a front end computes on. VKSPEC_DEVICE picks one (and only that one is tried);
// otherwise the instance's preferred device (discrete > integrated > CPU), and with
// `try_others` every other device in turn when the preferred one cannot be opened with these
// options (the viewer's device must also present to its window).
#include <memory>

#include "engine/vk/context.h"

namespace vkspec::frontend {

struct DeviceRequest {
  std::shared_ptr<Instance> instance;  // null: an instance from the environment
  ContextOptions options = ContextOptions::from_environment();
  bool try_others = false;
};

std::unique_ptr<Context> open_device(DeviceRequest request = {});

}  // namespace vkspec::frontend
