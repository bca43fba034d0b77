#pragma once
// A decoding strategy: started with (models, condition, seed, sampler settings, method options),
// advanced by step(), which returns a StepEvent. Strategies never draw or print; they record
// GPU work and read back only what the step's event needs.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "decoding/sampler_settings.h"
#include "decoding/step_event.h"
#include "engine/model/gpt.h"

namespace vkspec {

class CodebookNeighbours;
class DraftHeads;
class VqModel;

// The models a strategy may use; only `target` is required (strategy_needs says what else).
struct ModelSet {
  Context* ctx = nullptr;
  Gpt* target = nullptr;
  Gpt* drafter = nullptr;  // small GPT on the same token grid (draft-model SD, LANTERN)
  Gpt* low_res = nullptr;  // GPT on a coarser grid (MuLo-SD)
  VqModel* vq = nullptr;   // the tokenizer (MuLo-SD's pixel-space upsampler)
  const CodebookNeighbours* neighbours = nullptr;  // relaxed acceptance (LANTERN, MuLo-SD)
  DraftHeads* heads = nullptr;  // spatial draft heads on the target (Hawk, SSD)
};

// Method options as given on the command line (--window 16 -> {"window", "16"}), parsed and
// range-checked by each strategy; an option a method does not know is an error.
using MethodOptions = std::map<std::string, std::string>;

struct StrategyInputs {
  int64_t class_id = 0;
  uint64_t seed = 0;
  SamplerSettings sampler;
  MethodOptions options;
  bool profile = false;  // GPU timestamps per step (StepEvent::device_ms)
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual const char* name() const = 0;
  // Advances by one step; throws Error when already done.
  virtual StepEvent step() = 0;

  bool done() const { return committed_ == static_cast<int64_t>(grid_.size()); }
  const std::vector<int32_t>& grid() const { return grid_; }
  int64_t nfe() const { return nfe_; }

 protected:
  Strategy(const ModelSet& models, const StrategyInputs& in);
  int64_t image_tokens() const { return static_cast<int64_t>(grid_.size()); }
  // Fills the bookkeeping fields of an event (grid, counts, step index) and advances step_.
  void finish_event(StepEvent& e);

  ModelSet models_;
  StrategyInputs in_;
  std::vector<int32_t> grid_;
  int64_t committed_ = 0, nfe_ = 0, draft_forwards_ = 0, step_ = 0;
};

// Method names: "ar", "sjd", "scd-mc", "scd-gs", "sd", "lantern", ...
std::vector<std::string> strategy_names();
// The options a method accepts (without the leading --), so front ends can route options
// generically; empty for an unknown method.
std::vector<std::string> strategy_options(const std::string& method);
// What a method needs in its ModelSet besides the target, given its options.
struct StrategyNeeds {
  bool drafter = false, low_res = false, vq = false, neighbours = false, heads = false;
};
StrategyNeeds strategy_needs(const std::string& method, const MethodOptions& options = {});
// The most queries one forward of the method runs on a target with config `target` (what
// GptOptions::max_queries must allow); malformed options count as their defaults (the strategy
// reports them when it starts).
int64_t strategy_max_queries(const std::string& method, const MethodOptions& options, const GptConfig& target);
// Throws Error naming the method or option when the method is unknown or an option is bad.
std::unique_ptr<Strategy> make_strategy(const std::string& method, const ModelSet& models, const StrategyInputs& in);

// Reads an integer option in [lo, hi] (fallback when absent); throws naming the option.
int64_t option_int(const MethodOptions& o, const std::string& method, const std::string& key, int64_t fallback,
                   int64_t lo, int64_t hi);
double option_double(const MethodOptions& o, const std::string& method, const std::string& key, double fallback,
                     double lo, double hi);
std::string option_choice(const MethodOptions& o, const std::string& method, const std::string& key,
                          const std::string& fallback, const std::vector<std::string>& choices);
// Throws when o has a key outside `known`.
void check_options(const MethodOptions& o, const std::string& method, const std::vector<std::string>& known);

}  // namespace vkspec
