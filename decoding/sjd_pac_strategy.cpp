#include "decoding/sjd_pac_strategy.h"

#include <algorithm>
#include <limits>

#include "common/error.h"
#include "decoding/hawk_tree.h"
#include "decoding/sjd_pac_batch_strategy.h"

namespace vkspec {
namespace {

// Candidates per depth and candidate depths at most: a sibling's acceptance uniform is drawn under
// Accept round step * 8 + sibling (SjdPacStep).
constexpr int64_t kMaxWidth = 8, kMaxDepth = 8;

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

int64_t sjd_pac_tree_nodes(int64_t width, int64_t depth) {
  int64_t nodes = 0, level = 1;
  for (int64_t d = 0; d < depth; ++d, level *= width) nodes += level;
  return nodes;
}

std::vector<SjdPacNode> sjd_pac_shape(const std::vector<int>& pools, int64_t chain) {
  std::vector<SjdPacNode> nodes;
  for (const HawkTreeNode& h : hawk_tree_shape(HawkTreeKind::Cartesian, pools, std::numeric_limits<int64_t>::max()))
    nodes.push_back({h.parent, h.depth, h.pick, h.canonical, h.first_pick});
  int32_t last = 0;  // the deepest main-path node: the chain continues it
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].canonical) last = static_cast<int32_t>(i);
  for (int64_t t = 0; t < chain; ++t) {
    nodes.push_back({last, nodes[static_cast<size_t>(last)].depth + 1, 0, true, true});
    last = static_cast<int32_t>(nodes.size() - 1);
  }
  return nodes;
}

const SjdPacOptions& check_sjd_pac_options(const SjdPacOptions& o, int64_t vocab) {
  if (o.width < 1 || o.width > kMaxWidth || o.depth < 1 || o.depth > kMaxDepth)
    throw Error("sjd-pac: --width " + str(o.width) + " or --depth " + str(o.depth) + " out of range (1.." +
                str(kMaxWidth) + ", 1.." + str(kMaxDepth) + ")");
  if (o.width > vocab)
    throw Error("sjd-pac: --width " + str(o.width) + " asks for more distinct candidates than the " + str(vocab) +
                " tokens of the vocabulary");
  const int64_t tree = sjd_pac_tree_nodes(o.width, o.depth);
  if (tree > o.window)
    throw Error("sjd-pac: --width " + str(o.width) + " --depth " + str(o.depth) + " make a tree of " + str(tree) +
                " nodes with the root, more than --window " + str(o.window) + " (the nodes per forward)");
  return o;
}

SjdPacStrategy::SjdPacStrategy(const ModelSet& models, const StrategyInputs& in, const SjdPacOptions& options)
    : Strategy("sjd-pac", models, in, sjd_pac_max_queries(options), options.window),
      opt_(check_sjd_pac_options(options, vocab())),
      rows_(*models.ctx, opt_, models.target->config(), 1),
      image_(opt_, models.target->config(), in.seed, rows_.store(0)),
      step_rows_(*models.ctx, opt_, sjd_pac_max_queries(opt_), vocab(), "sjd-pac") {}

void SjdPacStrategy::decode(StepEvent& e) {
  TargetSession& t = target();
  const int64_t c = committed_;
  t.set_stage(stage::kSampling);
  const std::vector<SjdPacImage::Node> nodes = image_.build_tree(t.stream(), grid_, c);
  const int64_t M = static_cast<int64_t>(nodes.size()), T = M + static_cast<int64_t>(image_.repairs().size());
  step_rows_.begin(T);
  image_.record_rows(t.stream(), nodes, c, step_rows_, 0, static_cast<uint32_t>(step_));
  const GptOutputs out = t.forward(t.batch(candidate_tree_queries(t, nodes, c, image_.repairs(), grid_)));
  step_rows_.record(t.stream(), t.ctx(), out.logits,
                    in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::None, 0));
  t.submit_and_wait();
  step_rows_.download(t.ctx());
  image_.commit(nodes, step_rows_.image(0, M), 0, grid_, committed_, e,
                [&](uint32_t token, int64_t n) { return checked_token(token, n); });
  ++nfe_;
}

namespace {

SjdPacOptions sjd_pac_options(const OptionValues& o) {
  SjdPacOptions s;
  s.width = o.integer("width");
  s.depth = o.integer("depth");
  s.window = o.integer("window");
  s.path = o.choice("path") == "longest" ? SjdPacPath::Longest : SjdPacPath::First;
  const std::string& init = o.choice("init");
  s.init = init == "left" ? DraftInit::Left : init == "above" ? DraftInit::Above : DraftInit::Random;
  check_sjd_pac_options(s, std::numeric_limits<int64_t>::max());  // the vocabulary is checked with the model
  return s;
}

StrategyDescriptor sjd_pac() {
  StrategyDescriptor d;
  d.name = "sjd-pac";
  d.order = 95;  // after the existing methods: listings that name the first few keep their order
  d.summary = "SJD-PAC: a small tree of guesses right after the last token, then a long Jacobi chain whose old "
              "guesses are kept while they still pass";
  d.reference = "Kang et al., CVPR 2026, SJD-PAC (Proactive Drafting and Adaptive Continuation); --path first "
                "ours (exact), --path longest the released code's rule";
  d.options = {
      OptionSpec::integer("width", 3, 1, kMaxWidth, "K: candidates per tree depth (the paper's README prefers 4)"),
      OptionSpec::integer("depth", 3, 1, kMaxDepth,
                          "D: tree levels with the root (the code's tree_depth): D - 1 positions get K candidates"),
      OptionSpec::integer("window", 64, 2, 1024,
                          "L: nodes per forward with the root (the code's max_num_new_tokens); the branch-0 path "
                          "continues as a chain until L nodes (the target runs up to L + D - 1 queries)"),
      OptionSpec::choice("path", "first", {"first", "longest"},
                         "first: descend into the first accepted candidate, extra candidates drawn from q' without "
                         "replacement (exact); longest: the released code's rule, the longest accepted path and "
                         "extra candidates from the residual (lossy)"),
      OptionSpec::choice("init", "random", {"random", "left", "above"},
                         "how a position entering the window is first drafted: uniform tokens with q uniform (the "
                         "code's; K distinct ones in the tree), or the token to its left or above it (q a point "
                         "mass, one candidate)"),
  };
  d.lossless = [](const OptionValues& o) { return o.choice("path") == "first"; };
  d.max_queries = [](const OptionValues& o, const GptConfig&) { return o.integer("window") + o.integer("depth") - 1; };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    return std::make_unique<SjdPacStrategy>(m, in, sjd_pac_options(o));
  };
  d.make_batch = [](const ModelSet& m, const std::vector<StrategyInputs>& in, const OptionValues& o,
                    int64_t lanes) -> std::unique_ptr<BatchStrategy> {
    return std::make_unique<SjdPacBatchStrategy>(m, in, sjd_pac_options(o), lanes);
  };
  d.continuous_batching = true;
  return d;
}

const RegisterStrategy kSjdPac(sjd_pac());

}  // namespace
}  // namespace vkspec
