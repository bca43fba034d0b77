#include "decoding/eagle_strategy.h"

#include <algorithm>

#include "common/error.h"
#include "decoding/eagle_batch_strategy.h"
#include "engine/ops/draft_tokens.h"
#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"

namespace vkspec {

std::vector<OptionSpec> eagle_tree_option_specs() {
  const EagleTreeOptions d;
  return {OptionSpec::choice("tree", eagle_tree_kind_name(d.kind), {"dynamic", "static", "chain"},
                             "dynamic: EAGLE-2's tree, grown and cut by the draft probabilities; static: a fixed "
                             "tree (LANTERN++'s idea; its shape: --shape); chain: one path"),
          OptionSpec::integer("depth", d.depth, 1, ops::kMaxCutLevels,
                              "levels of the draft tree (drafter forwards per step, after "
                              "its catch-up)"),
          OptionSpec::integer("topk", d.topk, 1, static_cast<int64_t>(kEagleSiblings),
                              "proposals per expanded node, and nodes expanded per level"),
          OptionSpec::integer("nodes", d.nodes, 1, ops::kMaxCutRows - 1,
                              "candidates the target verifies besides the root (it runs up to 1 + nodes + depth "
                              "queries)"),
          OptionSpec::choice("shape", eagle_shape_name(d.shape), eagle_shape_names(),
                             "--tree static: cost: ours, the --nodes paths of best rank prior within --depth and "
                             "--topk; mc_sim_7b_63 (25 nodes) or naive_extend_57 (57): LANTERN++'s code's lists, "
                             "which fix depth, topk and nodes"),
          OptionSpec::choice("candidates", "top", {"top", "sampled"},
                             "top: the drafter's most likely tokens, tested as point masses (EAGLE-2's); sampled: "
                             "independent samples of its distribution, tested with min(1, p/q) (ours; static and "
                             "chain trees)")};
}

bool parse_eagle_sampled(const OptionValues& o) {
  const bool sampled = o.choice("candidates") == "sampled";
  if (sampled && o.choice("tree") == "dynamic")
    throw Error(o.method() + ": --candidates sampled needs --tree static or chain (a dynamic tree chooses among the "
                             "samples by their probabilities, which biases them)");
  return sampled;
}

EagleTreeOptions parse_eagle_tree_options(const OptionValues& o) {
  return parse_eagle_tree_options(o, parse_eagle_tree_kind(o.choice("tree")));
}

EagleTreeOptions parse_eagle_tree_options(const OptionValues& o, EagleTreeKind kind) {
  EagleTreeOptions t;
  t.kind = kind;
  t.depth = o.integer("depth");
  t.topk = o.integer("topk");
  t.nodes = o.integer("nodes");
  // Methods whose tree is always dynamic (vvs) do not declare --shape.
  t.shape = o.declares("shape") ? parse_eagle_shape(o.choice("shape")) : EagleShape::Cost;
  if (t.kind == EagleTreeKind::Chain) t.nodes = std::min(t.nodes, t.depth);
  if (t.shape == EagleShape::Cost) return t;
  if (t.kind != EagleTreeKind::Static)
    throw Error(o.method() + ": --shape " + o.choice("shape") + " needs --tree static");
  // A named shape fixes these; they are given only to the cost shape.
  for (const char* key : {"depth", "topk", "nodes"})
    if (o.given(key))
      throw Error(o.method() + ": --" + key + " is fixed by --shape " + o.choice("shape") + " (--shape cost takes it)");
  const ShapeExtent e = eagle_shape_extent(eagle_named_paths(t.shape));
  t.depth = e.depth;
  t.topk = e.topk;
  t.nodes = e.nodes;
  return t;
}

EagleStrategy::EagleStrategy(std::string method, const ModelSet& models, const StrategyInputs& in,
                             const EagleOptions& options)
    : Strategy(method, models, in, eagle_max_queries(options), options.tree.nodes),
      lane_(method, models, target(), options, target().rows()),
      probs_(models.ctx->tensor(DType::F32, {eagle_max_queries(options), vocab()}, method + " target probabilities")) {
  lane_.start({&in_, &grid_, &committed_, &nfe_, &draft_forwards_}, target().conditions());
}

void EagleStrategy::decode(StepEvent& e) {
  TargetSession& t = target();
  if (lane_.begin(e)) t.submit_and_wait();
  if (!lane_.prepare(e)) return;  // a skipped round (vvs)
  const int64_t T = lane_.queries();
  const GptBatch& batch = t.batch(lane_.step_queries(t.conditions()));
  lane_.record_into(batch, 0, 1, T);
  const GptOutputs out = t.forward(batch);
  const ops::SamplerParams none = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::None, 0);
  ops::sampler(t.stream(), out.logits, {}, none, probs_.view().rows(0, T), {});
  lane_.record_after(probs_.view().rows(0, T), out.hidden, 0, 1, T);
  t.submit_and_wait();
  lane_.finish(e);
}

namespace {

StrategyDescriptor eagle() {
  StrategyDescriptor d;
  d.name = "eagle";
  d.order = 45;
  d.summary = "EAGLE-2: a one-layer feature drafter proposes a dynamic tree, verified at once (lossless)";
  d.reference = "Li et al., EMNLP 2024, EAGLE-2: Faster Inference of Language Models with Dynamic Draft Trees "
                "(drafter: Li et al. 2024, EAGLE)";
  d.options = eagle_tree_option_specs();
  d.lossless = [](const OptionValues&) { return true; };
  d.needs = [](const OptionValues&) {
    StrategyNeeds n;
    n.eagle = true;
    return n;
  };
  d.max_queries = [](const OptionValues& o, const GptConfig&) {
    return eagle_max_queries(parse_eagle_tree_options(o));
  };
  set_eagle_factories(d, [](const OptionValues& o) {
    EagleOptions e;
    e.tree = parse_eagle_tree_options(o);
    e.sampled = parse_eagle_sampled(o);
    return e;
  });
  return d;
}

const RegisterStrategy kEagle(eagle());

}  // namespace
}  // namespace vkspec
