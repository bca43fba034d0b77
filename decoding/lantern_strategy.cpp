// LANTERN (Jang et al., ICLR 2025, "LANTERN: Accelerating Visual Autoregressive Models with
// Relaxed Speculative Decoding"): speculative decoding whose test accepts a draft x when the
// target puts enough mass near x in latent space. The relaxed target p' moves the mass of x's
// nearest codebook entries (ModelSet::neighbours) onto x while TV(p', p) <= delta; the test and
// the residual are then the usual ones against p' (the acceptance rule `lantern`,
// decoding/accept_lantern.cpp, which states the bound that holds: the committed token can move
// further than delta from p, p' depending on the draft).
// Drafts come from Jacobi self-drafting (--drafter jacobi, the default, training-free: SJD's
// window), from the drafter model (--drafter model, or a file on the command line: draft-model
// SD, decoding/sd_strategy.h, whose default window is 4), or from the paper's own drafter
// (--drafter eagle: the EAGLE-style feature drafter and its draft tree, decoding/eagle_strategy.h).
#include "common/error.h"
#include "decoding/eagle_batch_strategy.h"
#include "decoding/eagle_strategy.h"
#include "decoding/sd_strategy.h"
#include "decoding/window_batch_strategy.h"
#include "decoding/window_strategy.h"

namespace vkspec {
namespace {

bool drafts_with_model(const OptionValues& o) { return o.choice("drafter") == "model"; }
bool drafts_with_eagle(const OptionValues& o) { return o.choice("drafter") == "eagle"; }

// LANTERN's rule, fixed: the method takes its options (--k, --delta, --metric), not a choice.
AcceptRuleSlot lantern_slot() {
  AcceptRuleSlot slot;
  slot.option.clear();
  slot.fallback = "lantern";
  return slot;
}

// The options that belong to one drafter, refused with another.
void check_drafter_options(const OptionValues& o) {
  const bool eagle = drafts_with_eagle(o);
  for (const char* key : {"tree", "depth", "topk", "nodes", "shape", "candidates"})
    if (!eagle && o.given(key)) throw Error(std::string("lantern: --") + key + " applies to --drafter eagle only");
  if (!eagle) return;
  for (const char* key : {"window", "init", "alpha"})
    if (o.declares(key) && o.given(key))
      throw Error(std::string("lantern: --") + key + " does not apply to --drafter eagle");
}

EagleOptions eagle_options(const OptionValues& o) {
  EagleOptions e;
  e.tree = parse_eagle_tree_options(o);
  e.sampled = parse_eagle_sampled(o);
  e.rule = parse_accept_choice(o, lantern_slot());
  return e;
}

StrategyDescriptor lantern() {
  StrategyDescriptor d;
  d.name = "lantern";
  d.order = 50;
  d.summary = "LANTERN: relaxed acceptance, a guess close enough in the codebook counts as right";
  d.reference = "Jang et al., ICLR 2025, LANTERN: Accelerating Visual Autoregressive Models with Relaxed "
                "Speculative Decoding";
  d.options = window_option_specs();
  d.options[0].help += "; default 16 with Jacobi drafts, " + std::to_string(kSdDefaultDrafts) + " with --drafter model";
  d.options[1].help += " (Jacobi drafts only)";
  d.options.push_back(OptionSpec::choice("drafter", "jacobi", {"jacobi", "model", "eagle"},
                                         "who drafts: Jacobi iteration on the target, the drafter model (the "
                                         "CLI's --drafter FILE also selects it), or the EAGLE feature drafter with "
                                         "a draft tree (the paper's)"));
  for (OptionSpec& s : eagle_tree_option_specs()) {
    s.help += " (--drafter eagle only)";
    d.options.push_back(std::move(s));
  }
  d.accept_rules = lantern_slot();
  d.lossless = [](const OptionValues&) { return false; };
  d.needs = [](const OptionValues& o) {
    StrategyNeeds n = window_needs(o);  // heads with --init heads (the rule adds the neighbour table)
    n.drafter = drafts_with_model(o);
    n.eagle = drafts_with_eagle(o);
    return n;
  };
  d.max_queries = [](const OptionValues& o, const GptConfig&) {
    return drafts_with_eagle(o) ? eagle_max_queries(parse_eagle_tree_options(o)) : window_max_queries(o);
  };
  d.fixed_queries = [](const OptionValues& o) {
    return drafts_with_model(o) || drafts_with_eagle(o) || o.choice("init") == "heads" ? 0 : window_max_queries(o);
  };
  d.jacobi_window = [](const OptionValues& o) {
    return drafts_with_model(o) || drafts_with_eagle(o) ? int64_t{0} : o.integer("window");
  };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    check_drafter_options(o);
    if (drafts_with_eagle(o)) return std::make_unique<EagleStrategy>("lantern", m, in, eagle_options(o));
    if (!drafts_with_model(o))
      return std::make_unique<WindowStrategy>("lantern", m, in, DraftRule::Fresh,
                                              parse_window_options(o, lantern_slot()));
    if (o.given("init")) throw Error("lantern: --init applies to --drafter jacobi only");
    const int64_t drafts = o.given("window") ? o.integer("window") : kSdDefaultDrafts;
    return std::make_unique<SdStrategy>("lantern", m, in, drafts, parse_accept_choice(o, lantern_slot()));
  };
  d.make_batch = [](const ModelSet& m, const std::vector<StrategyInputs>& in, const OptionValues& o,
                    int64_t lanes) -> std::unique_ptr<BatchStrategy> {
    check_drafter_options(o);
    if (drafts_with_eagle(o)) return std::make_unique<EagleBatchStrategy>("lantern", m, in, eagle_options(o), lanes);
    if (drafts_with_model(o))
      throw Error("lantern: --drafter model decodes one image per forward (--batch takes --drafter jacobi or eagle)");
    return std::make_unique<WindowBatchStrategy>("lantern", m, in, DraftRule::Fresh,
                                                 parse_window_options(o, lantern_slot()), lanes);
  };
  d.continuous_batching = true;
  return d;
}

const RegisterStrategy kLantern(lantern());

}  // namespace
}  // namespace vkspec
