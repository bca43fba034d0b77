// LANTERN++ (Park, Jang, Kim, Kundu, Yang, ICLR 2025 workshop SCOPE, "LANTERN++: Enhancing
// Relaxed Speculative Decoding with Static Tree Drafting for Visual Auto-regressive Models"): the
// released code's `--static_tree --lantern` path as one method. The EAGLE feature drafter drafts a
// STATIC tree (the code's CLI default shape mc_sim_7b_63, decoding/eagle_tree_shapes.h), so low
// draft confidence never cuts it short, and every node is tested with LANTERN++'s multiplicative
// relaxation: the mass of the draft x's nearest codebook entries is moved onto x while it stays
// <= (lambda - 1) p(x), then the exact test against that p' (the rule `lantern` with --lambda,
// decoding/accept_lantern.cpp, which also gives the code's rejection residual).
//
// What is ours (docs/methods.md, "lantern++"): candidates are independent samples of the
// drafter's q tested with min(1, p'/q) (`lantern --drafter eagle --candidates sampled`), where the
// code draws a node's children without replacement and tests each against its conditional q.
// Lossy. `lantern --drafter eagle --tree static --shape mc_sim_7b_63 --candidates sampled
// --lambda L` runs the same; this name gives the paper's defaults.
#include <memory>

#include "common/error.h"
#include "decoding/accept_rule.h"
#include "decoding/eagle_batch_strategy.h"
#include "decoding/eagle_strategy.h"
#include "decoding/neighbour_options.h"

namespace vkspec {
namespace {

// run.sh's settings are k 10 with lambda 5 and k 5 with lambda 10 and 20 (the paper's final ones
// are not readable); our k counts x itself, the code's neighbour lists leave it out.
constexpr double kDefaultLambda = 5.0;
constexpr int64_t kDefaultK = 11;

std::vector<OptionSpec> lantern_pp_options() {
  std::vector<OptionSpec> specs = {
      OptionSpec::number("lambda", kDefaultLambda, 1.0, 1e6,
                         "the multiplicative budget: neighbours' mass moved onto a draft x stays <= (lambda - 1) "
                         "p(x), so p'(x) <= lambda p(x) (1: the exact test)"),
      OptionSpec::integer("k", kDefaultK, 1, 65536,
                          "nearest codebook entries pooled, the draft itself included (the code's lantern_k 10 "
                          "neighbours: 11; clamped to the table)"),
      neighbour_metric_spec()};
  for (OptionSpec& s : eagle_tree_option_specs()) {
    if (s.name == "tree" || s.name == "candidates") continue;  // static, sampled: the method's
    if (s.name == "shape") {
      s.fallback = eagle_shape_name(EagleShape::McSim7b63);
      s.help = "the static tree's rank paths: mc_sim_7b_63 (25 nodes, the code's CLI default) or naive_extend_57 "
               "(57), which fix depth, topk and nodes; cost: ours, the --nodes paths of best rank prior within "
               "--depth and --topk";
    }
    if (s.name == "depth" || s.name == "topk" || s.name == "nodes") s.help += " (--shape cost only)";
    specs.push_back(std::move(s));
  }
  return specs;
}

EagleTreeOptions lantern_pp_tree(const OptionValues& o) { return parse_eagle_tree_options(o, EagleTreeKind::Static); }

StrategyDescriptor lantern_pp() {
  StrategyDescriptor d;
  d.name = "lantern++";
  d.order = 51;
  d.summary = "LANTERN++: a static EAGLE draft tree judged by a multiplicative relaxation, p'(x) <= lambda p(x)";
  d.reference = "Park, Jang, Kim, Kundu, Yang, ICLR 2025 workshop SCOPE, LANTERN++: Enhancing Relaxed Speculative "
                "Decoding with Static Tree Drafting for Visual Auto-regressive Models";
  d.options = lantern_pp_options();
  d.lossless = [](const OptionValues&) { return false; };
  d.needs = [](const OptionValues&) {
    StrategyNeeds n;
    n.eagle = true;
    n.neighbours = true;  // the rule's table (the registry reads --metric)
    return n;
  };
  d.max_queries = [](const OptionValues& o, const GptConfig&) { return eagle_max_queries(lantern_pp_tree(o)); };
  set_eagle_factories(d, [](const OptionValues& o) {
    EagleOptions e;
    e.tree = lantern_pp_tree(o);
    e.sampled = true;
    // The lantern rule in its --lambda mode, reading this method's lambda, k and metric (its own
    // defaults, so the method lists them itself rather than through a fixed slot).
    AcceptRuleSlot lantern;
    lantern.option.clear();
    lantern.fallback = "lantern";
    e.rule = parse_accept_choice(o, lantern);
    return e;
  });
  return d;
}

const RegisterStrategy kLanternPp(lantern_pp());

}  // namespace
}  // namespace vkspec
