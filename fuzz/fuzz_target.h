#pragma once
// The one entry point every fuzz target defines (libFuzzer's), and the rule they share: bad input
// must end in vkspec::Error; any other exception escapes and fails the run, as a crash would.
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
