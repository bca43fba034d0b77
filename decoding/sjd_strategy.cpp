// Speculative Jacobi Decoding (Teng et al. 2024, "Accelerating Auto-regressive Text-to-Image
// Generation with Training-free Speculative Jacobi Decoding"): a window of L drafts verified with
// the probabilistic test min(1, p/q), stopping at the first rejection, which is resampled from
// norm(max(p - q, 0)); the drafts after it are resampled from this step's p (which becomes their
// q). The window machinery is decoding/window_strategy.h.
#include "decoding/window_registry.h"

namespace vkspec {
namespace {

const RegisterStrategy kSjd(window_method_descriptor(
    "sjd", 10, DraftRule::Fresh,
    "Speculative Jacobi Decoding: guesses a window of tokens, keeps them up to the first the model rejects",
    "Teng et al. 2024, Accelerating Auto-regressive Text-to-Image Generation with Training-free Speculative "
    "Jacobi Decoding"));

}  // namespace
}  // namespace vkspec
