// The sjd-pac method's registration: one image (SjdPacStrategy) or several per forward
// (SjdPacBatchStrategy), which is why it sits apart from both.
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "decoding/sjd_pac_batch_strategy.h"
#include "decoding/sjd_pac_strategy.h"

namespace vkspec {
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
      OptionSpec::integer("width", 3, 1, kSjdPacMaxWidth,
                          "K: candidates per tree depth (the paper's README prefers 4)"),
      OptionSpec::integer("depth", 3, 1, kSjdPacMaxDepth,
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
