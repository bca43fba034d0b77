#pragma once
// What one generate() or steps() call asks for, read as `vkspec generate` reads it: the Python
// keyword arguments arrive as `--name value` and go through the CLI's own option tables (sampler
// settings, method options, --batch, --caption-embeddings), so the names, ranges and error
// messages are the command's.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoding/strategy.h"
#include "frontend/sampler_options.h"

namespace vkspec::python {

struct RunOptions {
  std::string method;
  MethodOptions options;  // the options `method` declares (the strategy checks their values)
  frontend::SamplerOverrides sampler;
  int64_t batch = 1;
  std::shared_ptr<const Condition> caption;  // --caption-embeddings; null: class labels
  std::optional<std::string> prompt;         // --prompt: made by the target once it is loaded
};

// `command` names the call in errors ("generate", "steps").
RunOptions parse_run_options(const std::string& command, const std::string& method,
                             const std::vector<std::string>& args);

// Image i of the call: seeds[i], the caption or the prompt (through the target's tokenizer), else
// classes[i] (classes empty: i mod the model's classes, as `vkspec generate` numbers them).
// Throws naming the class, or the condition the model takes that is missing.
std::vector<StrategyInputs> image_inputs(const RunOptions& run, const Gpt& target, const std::string& model_path,
                                         const std::vector<uint64_t>& seeds, const std::vector<int64_t>& classes);

}  // namespace vkspec::python
