#pragma once
// Reads the trace JSON that write_trace produces (`vkspec generate --trace`), validating every field
// so that a damaged or hostile file gives an Error naming the file and the offending field, never a
// crash. The viewer replays traces without running the model.
#include <string>
#include <vector>

#include "decoding/trace.h"

namespace vkspec {

struct Trace {
  TraceConfig config;
  // One per generated image. Events come back without their grid (traces store only the final
  // grid); GridReplay rebuilds it step by step. StepEvent::done is set on the last event.
  std::vector<Generation> images;
};

// Limits a trace must respect; they bound the memory a replay needs.
constexpr int64_t kTraceMaxGridSize = 256;
constexpr int64_t kTraceMaxVocab = int64_t{1} << 24;
constexpr size_t kTraceMaxBytes = size_t{1} << 30;

// Throws Error naming `path` when the file is missing, unreadable or invalid.
Trace read_trace(const std::string& path);
// Parses trace text; `origin` names the source in error messages (a path, "stdin", "fuzz input").
Trace parse_trace(const std::string& text, const std::string& origin);

// The committed grid after each event of a traced image: a position becomes committed when an
// event lists it as accepted or resampled, with its token from the final grid. Methods that commit
// more than they list (the event's `committed` count is higher) commit the lowest undecided
// positions, which is raster order for the prefix-committing methods.
class GridReplay {
 public:
  explicit GridReplay(std::vector<int32_t> final_tokens);
  // Applies the next event; throws Error when it lists more positions than it says it committed.
  const std::vector<int32_t>& apply(const StepEvent& e);
  const std::vector<int32_t>& grid() const { return grid_; }
  void reset();

 private:
  std::vector<int32_t> final_;
  std::vector<int32_t> grid_;
  int64_t decided_ = 0;
  size_t next_raster_ = 0;
};

}  // namespace vkspec
