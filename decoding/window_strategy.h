#pragma once
// Jacobi-style window decoding, the machinery of sjd, scd-mc, scd-gs, lantern's Jacobi drafter and
// ssd-coupled; drafts are judged by the strategy's acceptance rule (lossless under the exact one).
//
// A window of L drafts follows the committed prefix. Each step runs one target forward over
// [last committed token + drafts] (speculative_base.h), verifies the drafts on the GPU and commits
// the accepted prefix plus the resolved token of the first rejected row. The positions after it
// keep a new draft drawn from this step's p, which becomes their q: what distinguishes the
// methods is how that new draft is drawn (DraftRule). Positions entering the window are
// initialised by a rule of their own (random / left / above) with the matching q (uniform, or a
// point mass on the copied token), so every draft's q is exactly the distribution it came from.
//
// Why this is lossless: a position's draft and q depend only on tokens at earlier positions and on
// random numbers keyed by the position itself, with fresh Accept/Residual rounds every step. So
// when the prefix before it is committed, the draft is an exact sample of q given that prefix, and
// accept-or-resample yields an exact sample of the target p.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "decoding/head_proposals.h"
#include "decoding/speculative_base.h"

namespace vkspec {

enum class DraftRule {
  Fresh,         // SJD: a new sample from p (Philox purpose Draft, round = step)
  Coupled,       // SCD-MC: the row's resolved token (accepted draft or residual), maximal coupling
  SharedGumbel,  // SCD-GS: Gumbel-max from p with noise keyed by (seed, position) only
};

// Heads: the newest proposal the token draft heads (ModelSet::heads) made for the position, from
// the nearest head (smallest offset) among those whose rows reached it; Above where none has. Any
// window method's --init heads, and ssd-coupled's drafting (`ssd` has latent heads of its own).
enum class DraftInit { Random, Left, Above, Heads };

struct WindowOptions {
  int64_t window = 16;
  // Coupling strength of Coupled / SharedGumbel (the SCD paper's alpha sweep): each next draft is
  // the coupled one with probability alpha, else an independent sample of the same p (a coin per
  // position and step, Philox purpose Couple). 0 drafts like SJD, 1 is full coupling. Lossless at
  // every alpha: both branches are exact samples of p, so their mixture is too.
  double alpha = 1.0;
  DraftInit init = DraftInit::Above;
  AcceptChoice accept;
  // With Heads: a draft re-verified this many times without being committed is replaced by the
  // newest head proposal for its position (0: never).
  int64_t redraft_after = 0;
};

// Options "window" (1..1024, default 16) and "init" (random|left|above|heads, default above).
std::vector<OptionSpec> window_option_specs();
// Option "alpha" (0..1, default 1): the coupling strength of the coupled methods.
OptionSpec coupling_strength_spec();
// Those options and the acceptance rule `slot` chooses.
WindowOptions parse_window_options(const OptionValues& o, const AcceptRuleSlot& slot = {});
const char* draft_init_name(DraftInit i);

// The registry's view of a window method: heads with --init heads (the rule adds its own needs),
// window + 1 queries per forward.
StrategyNeeds window_needs(const OptionValues& o);
int64_t window_max_queries(const OptionValues& o);

// How position n is first drafted under `how` (Random, Left or Above; Heads, for a position with
// no proposal, as Above; Above falls back to Left on the first image row, Left to Random at n = 0): the token, and
// whether its q is uniform (Random) rather than a point mass on the token. token_at(m): the committed token or current
// draft at m < n.
struct InitialDraft {
  uint32_t token = 0;
  bool uniform = false;
};
InitialDraft initial_draft(DraftInit how, uint64_t seed, int64_t n, int64_t vocab, int64_t grid_size,
                           const std::function<uint32_t(int64_t)>& token_at);

// What a step's row offers its position's next draft (SpeculativeStrategy::Outcome's entries).
struct NextDraftCandidates {
  uint32_t resolved = 0, fresh = 0, independent = 0;
};
// The draft position n keeps after step `round` left it undecided, from that step's row: the
// coupled one (rule Coupled: the row's resolved token, or its exact successor `fresh` under a lossy
// rule; SharedGumbel / Fresh: `fresh`) or, with alpha < 1 and the position's coin against it,
// `independent` (WindowOptions::alpha).
uint32_t next_window_draft(const WindowOptions& opt, DraftRule rule, bool exact_successor, uint64_t seed, int64_t n,
                           uint32_t round, const NextDraftCandidates& row);

class WindowStrategy : public SpeculativeStrategy {
 public:
  WindowStrategy(std::string method, const ModelSet& models, const StrategyInputs& in, DraftRule rule,
                 const WindowOptions& opt);

 protected:
  void decode(StepEvent& e) override;

 private:
  // Drafts (and their q rows) for positions [ready_, end).
  void initialise(int64_t end);
  // This step's part for the heads (HeadProposals): the window's rows, and inside the window the
  // positions redrafting may read a proposal of.
  HeadStep head_step(int64_t c, int64_t q, uint32_t round) const;
  uint32_t token_at(int64_t n) const;  // committed token or current draft

  DraftRule rule_;
  WindowOptions opt_;
  std::vector<uint32_t> drafts_;  // current draft per position (valid in [committed_, ready_))
  int64_t ready_ = 0;             // positions below have a draft and a q row
  Tensor q_;                      // f32 [N, V]: the q row of each position's current draft
  Tensor row_drafts_;             // u32 [max_q], host-written: the draft verified at each row
  // DraftInit::Heads: the heads' proposals, and per position the rounds its draft was verified.
  std::unique_ptr<HeadProposals> heads_;
  std::vector<int64_t> rounds_;
  std::vector<int64_t> redraft_;  // positions to re-draft from proposals at the next step
};

}  // namespace vkspec
