// ssd-coupled: our variant of SSD's block drafting (Xiang et al. 2026; `ssd` is the paper's
// method, ssd_strategy.cpp), kept under its own name so that bench measures both. It differs from
// the paper in the heads (token heads trained with cross-entropy, ModelSet::heads, not latent
// heads) and in the correction (maximal coupling, SCD-MC's rule, not the target's fresh samples).
// The window covers whole rows (--rows R, default 2: the current row and the next); positions
// entering it are drafted by the draft heads: the horizontal heads continue the current row, the
// vertical heads fill the rows below from the hidden states one and two rows up. Every step
// verifies the block in one forward; rejected tokens are corrected in place by maximal coupling
// (the next draft is the row's resolved token, as scd-mc), and a draft that has been re-verified
// --rounds times (default 3) without being committed is replaced by the newest head proposal for
// its position. Lossless: every draft is a sample of the q it is verified against, drawn with
// randomness of its own position (decoding/window_strategy.h).
#include <algorithm>

#include "common/error.h"
#include "decoding/window_strategy.h"

namespace vkspec {
namespace {

constexpr int64_t kDefaultRows = 2;

int64_t block_rows(const OptionValues& o, const GptConfig& target) {
  return o.integer_at_most("rows", target.grid_size, kDefaultRows);
}

StrategyDescriptor ssd_coupled() {
  StrategyDescriptor d;
  d.name = "ssd-coupled";
  d.order = 91;
  d.summary = "ours: SSD-style row blocks drafted by the token heads, rejected tokens corrected by maximal coupling";
  d.reference = "ours, after Xiang et al. 2026 (SSD): token heads instead of latent heads, SCD-MC's coupled correction "
                "(docs/methods.md)";
  d.options = {
      OptionSpec::integer("rows", kDefaultRows, 1, 1 << 20, "image rows per verified block (at most the grid)"),
      OptionSpec::integer("rounds", 3, 0, 1 << 20,
                          "re-verifications before a draft is replaced by the newest head proposal (0: never)")};
  d.lossless = [](const OptionValues&) { return true; };
  d.needs = [](const OptionValues&) {
    StrategyNeeds n;
    n.heads = true;
    return n;
  };
  d.max_queries = [](const OptionValues& o, const GptConfig& t) {
    return std::min(o.integer("rows"), t.grid_size) * t.grid_size + 1;
  };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    if (!m.target) throw Error("a strategy needs a context and a target model");
    WindowOptions w;
    w.init = DraftInit::Heads;
    w.redraft_after = o.integer("rounds");
    w.window = block_rows(o, m.target->config()) * m.target->config().grid_size;
    return std::make_unique<WindowStrategy>("ssd-coupled", m, in, DraftRule::Coupled, w);
  };
  return d;
}

const RegisterStrategy kSsdCoupled(ssd_coupled());

}  // namespace
}  // namespace vkspec
