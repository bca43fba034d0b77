#include "engine/vk/memory_report.h"

#include <unistd.h>

#include <cstdio>

#include "engine/vk/context.h"

namespace vkspec {

std::string MemoryReport::str() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "RSS %.1f MiB, device memory %.1f MiB in use (%.1f reserved)", rss_mib,
                device_in_use_mib, device_reserved_mib);
  return buf;
}

MemoryReport memory_report(Context& ctx) {
  MemoryReport r;
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  r.rss_mib = static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
  const AllocatorStats st = ctx.allocator().stats();
  r.device_in_use_mib = static_cast<double>(st.device_bytes_in_use) / (1 << 20);
  r.device_reserved_mib = static_cast<double>(st.device_bytes_reserved) / (1 << 20);
  return r;
}

}  // namespace vkspec
