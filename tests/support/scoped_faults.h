#pragma once
// Switches deliberate faults on for the strategies a test constructs while this object lives
// (decoding/fault_injection.h), on the current thread only.
#include "decoding/fault_injection.h"

namespace vkspec::testing {

class ScopedFaults {
 public:
  explicit ScopedFaults(const Faults& f) : faults_(f) { fault_seam::set_for_this_thread(&faults_); }
  ~ScopedFaults() { fault_seam::set_for_this_thread(nullptr); }
  ScopedFaults(const ScopedFaults&) = delete;
  ScopedFaults& operator=(const ScopedFaults&) = delete;

 private:
  Faults faults_;
};

}  // namespace vkspec::testing
