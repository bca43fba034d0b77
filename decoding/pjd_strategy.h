#pragma once
// PJD (Liao, Li, Jian, Wang, CVPR 2026, "Parallel Jacobi Decoding for Fast Autoregressive Image
// Generation"; code github.com/boyaliao/PJD, scheduler/jacobi_iteration_lumina_mgpt.py): several
// image rows active at once in a ZipAR-like staircase (pjd_schedule.h), each with its own Jacobi
// window, all windows in one target forward at their true 2D positions (slot = sequence position).
//
// Verification, per row left to right, u < p(x)/q(x) (ops::spec_accept, Philox key (seed, n,
// Accept, step)): the top active row is SJD (the accepted prefix, then at the first rejection a
// correction from norm(max(p - q, 0)) (key Residual, step), or with every draft accepted the bonus
// token, sampled as ar samples position n (key (seed, n, Sample))); the other rows commit their
// accepted prefix only, no correction, no bonus (the paper's rule; lossy).
//
// Next drafts, as the code does it: a position after a row's first rejection keeps its old draft
// AND its old q when p(x) > 0.5 q(x) (a fixed threshold, no random number; the code's
// min(p/q, 1) > 0.5), otherwise takes a fresh sample of this step's p (key (seed, n, Draft, step)),
// whose q is that p; so is the rejected position of a non-top row and the position the row's last
// query predicts. A position entering a window without a draft gets a uniform random image token
// (key (seed, n, DraftInit, step)) with a point-mass q, so its first test is u < p(x). Drafts that
// fall out of a shrunken window are dropped (the code keeps at most window - 1).
//
// Row starts: the code's Lumina-mGPT rows end with an end-of-line token, which is a row's known
// first input; LlamaGen's grid has none (and the code's LlamaGen script is not released), so a
// row starting before the row above is complete is fed ZipAR's placeholder (row_start_token)
// at the slot of the missing token, seen by that query alone, and the real token is fed there in
// the step after the row above completes (a repair query whose logits are unused).
// Options: --window (queries per row, the anchor plus window - 1 drafts; 8), --lag (tokens the row
// above has committed when a row starts; 8, at most the grid width), --mask row-causal|full.
//
// Ours, beside the paper (docs/methods.md, "pjd"): --lower-rows resolve lets every active row
// commit its resolution (the correction at its first rejection, or the bonus) as the top row
// does, so a row advances at least one token a forward, as in ZipAR; --lead keeps a lower row
// that many columns behind the row above (the paper's 1; ZipAR's window); --accept judges the
// drafts by any acceptance rule (decoding/accept_rule.h; the paper's is exact); --init above
// drafts a position entering a window as the committed token above it (SCD's init), with a
// point-mass q, where the paper draws a uniform token.
#include <memory>
#include <vector>

#include "decoding/accept_rule.h"
#include "decoding/pjd_schedule.h"
#include "decoding/strategy.h"
#include "engine/ops/speculative.h"

namespace vkspec {

enum class PjdLowerRows { Prefix, Resolve };
enum class PjdInit { Random, Above };

struct PjdOptions {
  int64_t window = 8, lag = 8, lead = 1;
  PjdMask mask = PjdMask::RowCausal;
  PjdLowerRows lower_rows = PjdLowerRows::Prefix;
  PjdInit init = PjdInit::Random;
  AcceptChoice accept;
};

// The options a run uses (--lag clamped to the grid width W).
PjdOptions parse_pjd_options(const OptionValues& o, int64_t W);

class PjdStrategy : public Strategy {
 public:
  PjdStrategy(const ModelSet& models, const StrategyInputs& in, const PjdOptions& opt);

 protected:
  void decode(StepEvent& e) override;

 private:
  struct Query {
    int64_t slot = 0;
    uint32_t fed = 0;                // image token fed (unused for the condition query)
    int64_t window = -1;             // index into the step's windows; -1 for a repair
    int64_t predicts = -1;           // image position whose p this query gives, -1 for a repair
    uint32_t draft = ops::kNoToken;  // the draft for `predicts`, verified at this query
    PjdFeed feed = PjdFeed::Committed;
  };
  // What the step read back, per query.
  struct Outcome {
    std::vector<uint32_t> sample, accept, resolved, fresh;
    std::vector<float> p_x, q_x;
  };
  // This step's queries (one window per active row, then a placeholder's repair); draws the
  // drafts of positions entering a window and records their point masses.
  std::vector<Query> plan(const std::vector<PjdWindow>& windows);
  // The first query of a window (the row's anchor); marks a placeholder.
  Query anchor_query(const PjdWindow& w, int64_t index);
  uint32_t draft_for(int64_t n, std::vector<std::pair<int64_t, uint32_t>>& point_masses);
  // Records the q rows of the step's queries (fresh q's of the last step first) and the
  // forward, sampler, tests and gathers after it; submits and reads back.
  Outcome run(const std::vector<Query>& queries, const PjdVisibility& vis);
  // Commits window w's outcome (queries [first, first + w.queries)), sets its next drafts.
  void resolve(const PjdWindow& w, int64_t first, const std::vector<Query>& queries, const Outcome& o, StepEvent& e);
  void set_fresh_draft(int64_t n, uint32_t token, int64_t query_row);

  PjdOptions opt_;
  int64_t W_;
  PjdSchedule schedule_;
  std::unique_ptr<AcceptRule> accept_;
  std::vector<int64_t> pending_;     // per position: its current draft, or -1
  std::vector<int64_t> fresh_from_;  // per position: the last step's query row whose p is its q, or -1
  std::vector<bool> placeholder_;    // per row: its anchor slot holds a placeholder's key and value
  std::vector<bool> slot_valid_;     // per cache slot (PjdVisibility)
  Tensor positions_, drafts_;        // u32 [max_q] uploads: Philox position, draft per query
  Tensor q_;                         // f32 [N, V]: each pending draft's q
  Tensor q_rows_, probs_;            // f32 [max_q, V]: the step's q and p per query
  Tensor identity_;                  // u32 [V, 1]: x -> x, so ops::pooled_prob reads p(x) and q(x)
  Tensor out_;                       // u32 [4, max_q] read back: sample, accept, resolved, fresh
  Tensor probs_x_;                   // f32 [2, max_q] read back: p(x), q(x) of each query's draft
};

}  // namespace vkspec
