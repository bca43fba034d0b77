// VVS (Dong et al., CVPR 2026, arXiv 2511.13587, "VVS: Accelerating Speculative Decoding for
// Visual Autoregressive Generation via Partial Verification Skipping"), as its released code runs
// it on LlamaGen: LANTERN's relaxed test on EAGLE-2's dynamic tree (decoding/eagle_strategy.h),
// where some rounds skip the target: a random path of the drafted tree, cut to the tree's mean
// path length, is committed unverified, the drafter drafts on from stale features, and the next
// verified round writes the skipped chain's KV in its forward (decoding/eagle_skip.cpp; the
// schedule and the path choice: decoding/vvs_schedule.h). Lossy even with --accept exact.
#include <memory>

#include "common/error.h"
#include "decoding/adaptive_tree.h"
#include "decoding/eagle_batch_strategy.h"
#include "decoding/eagle_strategy.h"
#include "decoding/vvs_schedule.h"

namespace vkspec {
namespace {

// The released defaults: EaModel's total_token 59 (the root and 58 drafts), depth 4 (5 drafter
// levels), top_k 10; LANTERN's rule with lantern_k 1000 and delta 0.2 (the rule's own defaults).
constexpr int64_t kDepth = 5, kTopk = 10, kNodes = 58;

// adaptive-tree's options that are eagle's too (its start and node budget): listed once.
bool eagle_size_option(const std::string& name) { return name == "depth" || name == "topk" || name == "nodes"; }

std::vector<OptionSpec> vvs_options() {
  const VvsOptions d;
  std::vector<OptionSpec> specs = {
      OptionSpec::choice("schedule", "uniform", {"uniform", "dynamic"},
                         "which rounds skip the target: uniform, one round in --interval (run_vvs.sh's); dynamic, a "
                         "round whose draft paths look alike (--threshold), never two in a row"),
      OptionSpec::integer("interval", d.interval, 2, 1 << 20, "uniform: round t skips when t mod interval = 1"),
      OptionSpec::number("threshold", d.threshold, -1.0, 1.0,
                         "dynamic: the draft paths' mean codebook cosine similarity (depth-weighted 0.9^l) that "
                         "skips")};
  specs.push_back(OptionSpec::choice("tree", "dynamic", {"dynamic", "adaptive"},
                                     "dynamic: EAGLE-2's tree (the code's); adaptive (ours): adaptive-tree's size per "
                                     "step, --depth and --topk its start"));
  for (OptionSpec& s : eagle_tree_option_specs()) {
    if (s.name == "tree" || s.name == "shape" || s.name == "candidates") continue;  // a dynamic tree of top tokens
    if (s.name == "depth") s.fallback = std::to_string(kDepth);
    if (s.name == "topk") s.fallback = std::to_string(kTopk);
    if (s.name == "nodes") s.fallback = std::to_string(kNodes);
    specs.push_back(std::move(s));
  }
  for (OptionSpec& s : adaptive_tree_option_specs()) {
    if (eagle_size_option(s.name)) continue;
    s.help += " (--tree adaptive)";
    specs.push_back(std::move(s));
  }
  return specs;
}

bool adaptive(const OptionValues& o) { return o.choice("tree") == "adaptive"; }

EagleTreeOptions vvs_tree(const OptionValues& o) {
  if (adaptive(o)) return adaptive_largest_tree(parse_adaptive_tree_options(o));
  for (const OptionSpec& s : adaptive_tree_option_specs())
    if (!eagle_size_option(s.name) && o.given(s.name))
      throw Error(o.method() + ": --" + s.name + " applies to --tree adaptive");
  return parse_eagle_tree_options(o, EagleTreeKind::Dynamic);
}

VvsOptions parse_vvs_options(const OptionValues& o) {
  VvsOptions v;
  v.schedule = o.choice("schedule") == "dynamic" ? VvsOptions::Schedule::Dynamic : VvsOptions::Schedule::Uniform;
  v.interval = o.integer("interval");
  v.threshold = o.number("threshold");
  if (v.schedule == VvsOptions::Schedule::Dynamic && o.given("interval"))
    throw Error(o.method() + ": --interval applies to --schedule uniform");
  if (v.schedule == VvsOptions::Schedule::Uniform && o.given("threshold"))
    throw Error(o.method() + ": --threshold applies to --schedule dynamic");
  return v;
}

StrategyDescriptor vvs() {
  StrategyDescriptor d;
  d.name = "vvs";
  d.order = 52;
  d.summary = "VVS: LANTERN on EAGLE-2's tree, some rounds commit a random draft path without the target (lossy)";
  d.reference = "Dong, Li, Lu, Tang, Xia, Wang, CVPR 2026, VVS: Accelerating Speculative Decoding for Visual "
                "Autoregressive Generation via Partial Verification Skipping";
  d.options = vvs_options();
  AcceptRuleSlot rule;
  rule.fallback = "lantern";
  d.accept_rules = rule;
  d.lossless = [](const OptionValues&) { return false; };
  d.needs = [](const OptionValues& o) {
    StrategyNeeds n;
    n.eagle = true;
    n.tokenizer = o.choice("schedule") == "dynamic";
    return n;
  };
  d.max_queries = [](const OptionValues& o, const GptConfig&) {
    EagleOptions e;
    e.tree = vvs_tree(o);
    e.skip = VvsOptions{};
    return eagle_max_queries(e);
  };
  set_eagle_factories(d, [](const OptionValues& o) {
    EagleOptions e;
    e.tree = vvs_tree(o);
    if (adaptive(o)) e.adaptive = parse_adaptive_tree_options(o);
    e.skip = parse_vvs_options(o);
    e.rule = parse_accept_choice(o, *find_strategy("vvs").accept_rules);
    return e;
  });
  return d;
}

const RegisterStrategy kVvs(vvs());

}  // namespace
}  // namespace vkspec
