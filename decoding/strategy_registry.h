#pragma once
// The strategy registry: each strategy file registers one StrategyDescriptor beside its class
// (name, one-line summary, reference, options as data, the models it needs, its largest forward,
// whether it is lossless, a factory), the way op checks register. The CLI (--help, option
// routing), bench, the NFE projection, the viewer's method list and docs/methods.md's option
// tables read it, so a new method is one file pair plus its tests.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoding/accept_rule.h"
#include "decoding/option_spec.h"
#include "engine/model/gpt_config.h"
#include "engine/model/neighbour_metric.h"

namespace vkspec {

class Strategy;
class BatchStrategy;
struct ModelSet;
struct StrategyInputs;

// What a method needs in its ModelSet besides the target, given its options.
struct StrategyNeeds {
  bool drafter = false, low_res = false, tokenizer = false, neighbours = false, heads = false, latent_heads = false,
       eagle = false;
  bool sr_net = false, latent_upsampler = false;  // MuLo-SD's trained upsamplers
  bool flashar = false;                           // FlashAR's post-trained model
  // With `neighbours`: the table's metric, the run's --metric (needs_for fills it in for every
  // method that declares the option, so a method's own `needs` does not have to).
  NeighbourMetric neighbour_metric = NeighbourMetric::L2;
};

struct StrategyDescriptor {
  std::string name;       // what --method and --methods take
  int order = 100;        // listing order (bench's tables, the viewer's menu, --help)
  std::string summary;    // one line for people: the viewer's caption, --help
  std::string reference;  // the paper, or "ours" with how it differs (docs/methods.md)
  std::vector<OptionSpec> options;
  // Methods judged by an acceptance rule (decoding/accept_rule.h): where the rule is chosen. When
  // the registry is first read it appends the slot's options (the choice and the rules' options)
  // to `options`, and needs_for / lossless_for add the chosen rule's needs and losslessness, so a
  // method's own `needs` and `lossless` speak only of itself.
  std::optional<AcceptRuleSlot> accept_rules;
  // The baseline every other method is compared with (speedup columns, the viewer's race).
  bool reference_method = false;
  // Whether a run with these options samples exactly ar's distribution (with accept_rules: when
  // its rule is lossless).
  std::function<bool(const OptionValues&)> lossless;
  std::function<StrategyNeeds(const OptionValues&)> needs;  // empty: the target alone
  // The most queries one target forward runs (what GptOptions::max_queries must allow).
  std::function<int64_t(const OptionValues&, const GptConfig&)> max_queries;
  // Methods whose largest forward also depends on the low-resolution model (MuLo-SD: the target
  // verifies r band rows, r = target grid / low-resolution grid); used instead of max_queries
  // when that model's configuration is known.
  std::function<int64_t(const OptionValues&, const GptConfig& target, const GptConfig& low_res)>
      max_queries_with_low_res;
  // Queries of every target forward when that number is fixed and nothing but the target runs
  // (the NFE projection); 0 when it varies or other models also run. Empty: 0.
  std::function<int64_t(const OptionValues&)> fixed_queries;
  // Jacobi window methods: the drafts one step verifies (rows [c, c + window), then one row
  // without a draft while the image has room), which per-iteration statistics need to tell draft
  // rows apart (decoding/iteration_stats.h). Empty or 0: not such a method.
  std::function<int64_t(const OptionValues&)> jacobi_window;
  // Builds the strategy from options already checked against `options`.
  std::function<std::unique_ptr<Strategy>(const ModelSet&, const StrategyInputs&, const OptionValues&)> make;
  // Builds the strategy for several images sharing every forward (decoding/batch_strategy.h), the
  // inputs agreeing on options and sampler settings, `lanes` of them in each forward (lanes =
  // inputs unless continuous_batching); empty: the method decodes one image at a time.
  std::function<std::unique_ptr<BatchStrategy>(const ModelSet&, const std::vector<StrategyInputs>&, const OptionValues&,
                                               int64_t lanes)>
      make_batch;
  // make_batch takes fewer lanes than inputs: an input takes the lane of an image that finished
  // (images of a method whose steps commit varying numbers of tokens finish at different steps).
  bool continuous_batching = false;

  // `given` checked against `options` (throws naming the method and option).
  OptionValues values(const MethodOptions& given) const;
  // Bad values read as defaults, unknown options ignored: for sizing models before make() reports.
  OptionValues lenient_values(const MethodOptions& given) const;
  StrategyNeeds needs_for(const MethodOptions& given) const;
  int64_t max_queries_for(const MethodOptions& given, const GptConfig& target,
                          const GptConfig* low_res = nullptr) const;
  int64_t fixed_queries_for(const MethodOptions& given) const;
  int64_t jacobi_window_for(const MethodOptions& given) const;
  bool lossless_for(const MethodOptions& given) const;
  // "lossless", "lossy", or "lossy by default, lossless with --OPTION CHOICE" (the first choice of
  // an option that makes it lossless: an acceptance rule): what `vkspec methods` says.
  std::string losslessness() const;
  bool has_option(const std::string& key) const;
};

// Every registered method, in listing order, and their names.
const std::vector<const StrategyDescriptor*>& strategy_registry();
std::vector<std::string> strategy_names();
// The method's descriptor; throws Error naming the known methods for an unknown name.
const StrategyDescriptor& find_strategy(const std::string& name);
// The reference method's name (ar).
const std::string& reference_method_name();
// The methods with a batch factory, comma-separated (for errors and help).
std::string batch_method_names();

// Registers a descriptor from a static initialiser in the strategy's own file.
struct RegisterStrategy {
  explicit RegisterStrategy(StrategyDescriptor d);
};

}  // namespace vkspec
