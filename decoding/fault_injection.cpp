#include "decoding/fault_injection.h"

namespace vkspec {
namespace {

thread_local const Faults* g_faults = nullptr;

}  // namespace

const Faults& active_faults() {
  static const Faults none;
  return g_faults ? *g_faults : none;
}

void fault_seam::set_for_this_thread(const Faults* faults) { g_faults = faults; }

}  // namespace vkspec
