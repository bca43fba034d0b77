// adaptive-tree: EAGLE-2's dynamic draft tree (decoding/eagle_strategy.h) whose depth and width
// follow the acceptance of the neighbouring positions' steps, ADT-Tree's idea (Lei et al., arXiv
// 2512.21857) with our update rule (decoding/adaptive_tree.h; the paper's rule is not released).
// Lossless with --accept exact (the default): each step's tree depends only on committed steps,
// and elimination sampling is exact for any such tree; --accept lantern judges it with LANTERN's
// relaxed test, as the paper's README example runs it (lossy).
#include <memory>

#include "decoding/adaptive_tree.h"
#include "decoding/eagle_batch_strategy.h"
#include "decoding/eagle_strategy.h"

namespace vkspec {
namespace {

StrategyDescriptor adaptive_tree() {
  StrategyDescriptor d;
  d.name = "adaptive-tree";
  d.order = 46;
  d.summary = "EAGLE-2 with each step's tree depth and width set by its neighbours' acceptance (ADT-Tree's idea, "
              "our rule; lossless)";
  d.reference = "ours after Lei et al., arXiv 2512.21857, Fast Inference of Visual Autoregressive Model with "
                "Adjacency-Adaptive Dynamical Draft Trees (ADT-Tree): its released code lacks the update rule";
  d.options = adaptive_tree_option_specs();
  d.accept_rules = AcceptRuleSlot{};
  d.lossless = [](const OptionValues&) { return true; };  // the rule's losslessness is the registry's
  d.needs = [](const OptionValues&) {
    StrategyNeeds n;
    n.eagle = true;
    return n;
  };
  d.max_queries = [](const OptionValues& o, const GptConfig&) {
    return eagle_max_queries(adaptive_largest_tree(parse_adaptive_tree_options(o)));
  };
  set_eagle_factories(d, [](const OptionValues& o) {
    EagleOptions e;
    e.adaptive = parse_adaptive_tree_options(o);
    e.tree = adaptive_largest_tree(*e.adaptive);
    e.rule = parse_accept_choice(o);
    return e;
  });
  return d;
}

const RegisterStrategy kAdaptiveTree(adaptive_tree());

}  // namespace
}  // namespace vkspec
