#pragma once
// The device rows of SJD-PAC steps (sjd_pac_strategy.h states the method) for the trees of one or
// more images, each image's at rows of its own (SjdPacImage writes them): the sampler, every
// multi-draft test in one ops::tree_tests dispatch and the draws for the next candidates, all
// under per-row keys (ops::RowKeys: each image's own seed and step count), so an image's tokens
// are those it gets decoded alone, seed for seed.
#include <cstdint>
#include <string>
#include <vector>

#include "decoding/window_strategy.h"
#include "engine/ops/sampler.h"

namespace vkspec {

enum class SjdPacPath { First, Longest };

struct SjdPacOptions {
  int64_t width = 3;    // K: candidates per tree depth
  int64_t depth = 3;    // D: tree levels with the root (the code's tree_depth): D - 1 candidate depths
  int64_t window = 64;  // L: nodes per forward with the root (the code's max_num_new_tokens)
  SjdPacPath path = SjdPacPath::First;
  // How a position entering the window is first drafted: uniform (the code's, K distinct tokens in
  // the tree), or the token to its left / above it with a point-mass q (one candidate: a point
  // mass has no second token to draw).
  DraftInit init = DraftInit::Random;
};

// Candidates per depth and candidate depths at most: a sibling's acceptance uniform is drawn under
// Accept round step * 8 + sibling (SjdPacStep).
inline constexpr int64_t kSjdPacMaxWidth = 8, kSjdPacMaxDepth = 8;
// o, or an Error naming the option when K, D, L make no tree for a vocabulary of `vocab`.
const SjdPacOptions& check_sjd_pac_options(const SjdPacOptions& o, int64_t vocab);

// Target queries per image and step: the root, the nodes, and up to D - 1 repairs.
int64_t sjd_pac_max_queries(const SjdPacOptions& o);
// Removed-candidate rows per image ((K - 1)(D - 1), at least 1).
int64_t sjd_pac_extra_rows(const SjdPacOptions& o);

// An image's step as read back: per node of its tree (rows [first, first + M) of the step).
struct SjdPacReadback {
  std::vector<uint32_t> accept, final_token;
  std::vector<std::vector<uint32_t>> draws;  // [draw][node]: draws for the node's next position
};

// A step's device rows for the trees of one or more images, each at rows of its own; padding rows
// (a lane without an image, or past an image's queries) are roots without children whose results
// nobody reads.
class SjdPacStep {
 public:
  SjdPacStep(Context& ctx, const SjdPacOptions& opt, int64_t rows, int64_t vocab, const std::string& owner);

  // Starts a step of R rows: every host row reset to padding.
  void begin(int64_t R);
  // Host rows the images write in SjdPacImage::record_rows.
  struct Row {
    int32_t parent = -1;       // global row of the node's parent
    uint32_t token = 0;        // the node's candidate
    uint32_t accept_pos = 0;   // Philox position of its test
    uint32_t final_pos = 0;    // and of its next token's draw (the position it predicts)
    uint64_t seed = 0;         // the image's
    uint32_t round = 0;        // the image's step
    int64_t first_child = -1;  // row of its branch-0 child (--path longest draws from its residual)
  };
  Row& row(int64_t r) { return rows_[static_cast<size_t>(r)]; }
  const Tensor& probs() const { return probs_; }
  const Tensor& q_tree() const { return q_tree_; }
  // Records the sampler over the forward's logits (rows [0, R)), every tree's tests and the draws.
  void record(CommandStream& s, Context& ctx, const TensorView& logits, const ops::SamplerParams& none);
  // After the submit: the image's rows [first, first + M).
  void download(Context& ctx);
  SjdPacReadback image(int64_t first, int64_t M) const;

 private:
  void upload(Context& ctx);
  void record_draws(CommandStream& s);

  SjdPacOptions opt_;
  int64_t draws_per_node_, R_ = 0;
  std::vector<Row> rows_;
  std::vector<uint32_t> accept_host_, final_host_, draws_host_;
  Tensor probs_, q_tree_, residuals_, first_child_q_;  // f32 [rows, V]
  Tensor tokens_, parents_, test_pos_, draw_pos_;  // host-written: u32 [rows], i32 [rows], u32 [rows, 2], u32 [rows]
  Tensor seeds_, rounds_, draw_rounds_;            // host-written keys: u32 [rows, 2] x2, u32 [draws, rows]
  Tensor accept_, final_, draws_;                  // read back: u32 [rows], [rows], [draws, rows]
};

}  // namespace vkspec
