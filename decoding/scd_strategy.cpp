// Speculative Coupled Decoding (So et al., ICML 2026): SJD's window and test, but every position
// of the window is verified (vectorised, no break) and the next draft of each position is coupled
// with its previous one, so that drafts stop changing once the prefix they depend on settles.
//  - scd-mc, maximal coupling: the next draft is the row's resolved token (the draft when
//    accepted, else the residual sample), an exact sample of p that equals the previous draft with
//    probability 1 - TV(p, q).
//  - scd-gs, Gumbel sharing: the next draft is argmax(log p + g) with Gumbel noise g keyed only by
//    (seed, position) in the counter-based RNG, shared by every iteration without a stored table;
//    consecutive drafts collide with probability >= (1 - TV) / (1 + TV).
// Both take --alpha, the coupling strength of the paper's sweep: the coupled next draft with
// probability alpha, else an independent sample of p (WindowOptions::alpha; lossless at any alpha).
#include "decoding/window_registry.h"

namespace vkspec {
namespace {

const char* const kScdPaper = "So et al., ICML 2026, Speculative Coupled Decoding";

const RegisterStrategy kScdMc(window_method_descriptor(
    "scd-mc", 20, DraftRule::Coupled,
    "Speculative Coupled Decoding: verifies the whole window and couples each rejected guess to its resample, so "
    "guesses settle faster",
    kScdPaper));
const RegisterStrategy kScdGs(window_method_descriptor(
    "scd-gs", 30, DraftRule::SharedGumbel,
    "Speculative Coupled Decoding with shared Gumbel noise: successive guesses reuse the same noise", kScdPaper));

}  // namespace
}  // namespace vkspec
