#pragma once
// Host and device memory of this process at one moment: what long runs (kiosk, bench soak) log
// to show that nothing grows.
#include <string>

namespace vkspec {

class Context;

struct MemoryReport {
  double rss_mib = 0;              // resident set of the whole process (/proc/self/statm)
  double device_in_use_mib = 0;    // handed out as buffers by the context's allocator
  double device_reserved_mib = 0;  // VkDeviceMemory held
  std::string str() const;         // "RSS 93.9 MiB, device memory 27.3 MiB in use (64.0 reserved)"
};

MemoryReport memory_report(Context& ctx);

}  // namespace vkspec
