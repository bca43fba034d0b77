// Fuzz target: the trace reader (every field validated) and the replay of what it accepts.
#include <string>

#include "decoding/trace_reader.h"
#include "common/error.h"
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const vkspec::Trace t = vkspec::parse_trace(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    for (const vkspec::Generation& g : t.images) {
      vkspec::GridReplay replay(g.tokens);
      for (const vkspec::StepEvent& e : g.events) replay.apply(e);
    }
  } catch (const vkspec::Error&) {
  }
  return 0;
}
