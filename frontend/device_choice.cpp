#include "frontend/device_choice.h"

#include "common/env.h"
#include "common/error.h"

namespace vkspec::frontend {

std::unique_ptr<Context> open_device(DeviceRequest request) {
  if (!request.instance) request.instance = std::make_shared<Instance>();
  const std::shared_ptr<Instance>& instance = request.instance;
  const uint32_t preferred = instance->preferred_device();
  try {
    return std::make_unique<Context>(instance, preferred, request.options);
  } catch (const Error&) {
    // A device the user asked for is never silently replaced.
    if (!request.try_others || env::text(env::kDevice)) throw;
    for (uint32_t i = 0; i < instance->devices().size(); ++i) {
      if (i == preferred) continue;
      try {
        return std::make_unique<Context>(instance, i, request.options);
      } catch (const Error&) {
      }
    }
    throw;
  }
}

}  // namespace vkspec::frontend
