#pragma once
// Deliberate deviations from the lossless algorithms, for the tests that show the statistical
// tests have power. Product code only reads them (active_faults(), all off); only tests switch
// them on, through testing::ScopedFaults (tests/support/scoped_faults.h), for the strategies
// constructed while it lives.
namespace vkspec {

struct Faults {
  // Verify against the draft distribution without top-k and top-p while drafting from the
  // filtered one (a known bug in other implementations).
  bool q_unfiltered = false;
  // Under a relaxed rule, carry the relaxed resolution forward as the coupled next draft instead
  // of the exact successor (record_exact_successor), as vkspec did before 2026-11-21.
  bool relaxed_successor = false;
  // The exact rule's rejections resample from p itself instead of the residual norm(max(p - q, 0))
  // (speculative sampling without its correction).
  bool skip_residual = false;
  // The window methods keep the previous round's q for their drafts on odd rounds: a draft drawn
  // from this round's p is then tested against the q of the round before (a draft probability
  // from the wrong round).
  bool stale_q = false;
};

// The faults strategies constructed now should carry (this thread's; none outside tests).
const Faults& active_faults();

namespace fault_seam {
// The test-only setter behind testing::ScopedFaults: nullptr restores "none".
void set_for_this_thread(const Faults* faults);
}  // namespace fault_seam

}  // namespace vkspec
