#include "frontend/shard_option.h"

#include "common/error.h"

namespace vkspec::frontend {

OptionDoc shard_option() {
  return {"--shard", "I/N",
          "make only shard I (0-based) of N of the --images: the contiguous block of images "
          "I*images/N .. (I+1)*images/N - 1 (rounded down), with exactly the seeds and classes of the one-process "
          "run (a Slurm array task: --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT; tools/slurm/)"};
}

Shard shard_from(const ArgParser& ap, int64_t images, const std::string& command) {
  const auto text = ap.get("--shard");
  if (!text) return {};
  Shard s;
  try {
    s = parse_shard(*text);
  } catch (const Error& e) {
    throw Error(command + ": " + e.what());
  }
  if (s.count > images)
    throw Error(command + ": --shard " + *text + " splits " + std::to_string(images) + " image(s) into " +
                std::to_string(s.count) + " shards; use at most " + std::to_string(images) + " shards");
  return s;
}

}  // namespace vkspec::frontend
