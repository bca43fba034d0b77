#pragma once
// VVS (Dong et al., CVPR 2026, arXiv 2511.13587, "VVS: Accelerating Speculative Decoding for
// Visual Autoregressive Generation via Partial Verification Skipping") apart from the device:
// which rounds skip the target's verification, and in a skipped round which draft path is
// committed unverified and how much of it. As the released code (models/skip_utils_llamagen.py)
// does it:
//   uniform schedule: round t (0 = the first tree, drafted after the first token) skips when
//     t mod interval == 1; dynamic: a round right after a skip never does, otherwise it skips when
//     the draft paths look alike, similarity S >= threshold (path_similarity);
//   no round skips while fewer than 6 tokens are committed (the drafter needs features to reuse);
//   the path: a uniformly random root-to-leaf path of the cut tree, truncated to the tree's mean
//     path length (the root counted) minus one, at least one draft (the code allows none).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkspec {

struct VvsOptions {
  enum class Schedule { Uniform, Dynamic } schedule = Schedule::Uniform;
  int64_t interval = 5;     // uniform: one skipped round in `interval`
  double threshold = 0.70;  // dynamic: the path similarity that skips
  double decay = 0.9;       // dynamic: depth l's weight decay^l (normalised), the code's constant
};

// The fewest committed tokens before a round may skip (the code's `new_token <= 5` guard).
inline constexpr int64_t kVvsFirstSkip = 6;

// Whether round `round` (0 = the first tree) skips by the uniform schedule.
bool vvs_uniform_skips(const VvsOptions& o, int64_t round, int64_t committed);

// The dynamic schedule's S: every second path (rows 0, 2, 4, ...; paths of drafts, the root left
// out), each draft mapped to its codebook row (codebook [entries, dim] row-major) and L2-normalised;
// per pair of paths the cosine similarity at each depth both reach (0 where one has ended),
// weighted by decay^l / sum over the longest path's depths; S = the mean over pairs. 0 with fewer
// than two such paths.
double vvs_path_similarity(const std::vector<std::vector<int32_t>>& paths, const std::vector<float>& codebook,
                           int64_t dim, double decay);

struct VvsSkip {
  size_t path = 0;     // index of the chosen path
  int64_t drafts = 0;  // its first `drafts` drafts are committed (>= 1)
};
// The skipped round's commit: path index floor(u * paths) (u uniform in [0, 1)), truncated to
// min(its drafts, floor(sum of (drafts + 1) over the paths / paths) - 1), at least 1.
VvsSkip vvs_choose_skip(const std::vector<std::vector<int32_t>>& paths, float u);

}  // namespace vkspec
