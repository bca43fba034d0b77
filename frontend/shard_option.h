#pragma once
// --shard I/N of generate and bench (common/shard.h): its help line and its checked value.
#include <cstdint>
#include <string>

#include "common/shard.h"
#include "frontend/arg_parser.h"

namespace vkspec::frontend {

OptionDoc shard_option();
// --shard's value (0/1 when absent), checked against the run's image count: every shard must get
// at least one image. Throws Error naming the command, the option and the value.
Shard shard_from(const ArgParser& ap, int64_t images, const std::string& command);

}  // namespace vkspec::frontend
