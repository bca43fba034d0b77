#pragma once
// The draft tree's size chosen per step from how its neighbours' steps went: ADT-Tree's idea (Lei
// et al., arXiv 2512.21857, "Fast Inference of Visual Autoregressive Model with Adjacency-Adaptive
// Dynamical Draft Trees"), with an update rule of ours: the paper's rule is not in its released
// code, which parses the method's flag and ignores it (docs/methods.md, "adaptive-tree", says what
// is the paper's and what is ours).
//
// A step's tree has a depth D (drafter levels) and a width W (EAGLE-2's top-k: proposals per
// expanded node and nodes expanded per level), and verifies at most min(nodes, D * W) candidates
// (budget product), or `nodes` whatever its shape (budget fixed, ours: the size moves only how
// deep and how wide EAGLE-2's reranking may place the same number of candidates).
// After a step verified a tree of depth D and accepted a drafts, alpha = a / D is compared with
// beta: alpha >= beta moves the next tree deeper and narrower, alpha < beta shallower and wider,
// by halving the distance to the bound (bisect, the paper's "bisectional" refinement as we read
// it) or by one (unit). The size a step ends with is recorded at every position it committed; the
// next step starts from the size recorded at the position left of its first draft (horizontal,
// the paper's initialisation), or above it at a row start, where the left one is the previous
// row's end (ours); vertical starts from the one above everywhere (the earlier version's variant).
// Pure host logic: the sizes depend only on committed steps, so exact verification stays exact.
#include <cstdint>
#include <string>
#include <vector>

#include "decoding/eagle_tree.h"
#include "decoding/option_spec.h"

namespace vkspec {

struct TreeSize {
  int64_t depth = 0, width = 0;
  bool operator==(const TreeSize& o) const { return depth == o.depth && width == o.width; }
};

struct AdaptiveTreeOptions {
  TreeSize start{6, 10};  // the first step's (EAGLE-2 at our eagle defaults: 60 nodes)
  TreeSize min{2, 2}, max{10, 10};
  int64_t nodes = 60;  // the most candidates a tree verifies besides the root
  double beta = 0.5;
  enum class Init { Horizontal, Vertical } init = Init::Horizontal;
  enum class Update { Bisect, Unit } update = Update::Bisect;
  enum class Budget { Product, Fixed } budget = Budget::Product;
};

// The method's options (its tree's bounds, beta, the initialisation and the update) and their
// parse, which checks min <= start <= max.
std::vector<OptionSpec> adaptive_tree_option_specs();
AdaptiveTreeOptions parse_adaptive_tree_options(const OptionValues& o);
// The largest tree a step may use: a dynamic tree the buffers and the target's forward are sized for.
EagleTreeOptions adaptive_largest_tree(const AdaptiveTreeOptions& a);

class AdaptiveTreeShape {
 public:
  AdaptiveTreeShape(const AdaptiveTreeOptions& o, int64_t grid_width, int64_t image_tokens);

  // The size of the tree drafted from committed position c (its first draft at position c).
  TreeSize at(int64_t c) const;
  // The candidates that tree verifies: min(nodes, depth * width), or nodes with a fixed budget
  // (the tree's growth caps either at what its depth and width hold).
  int64_t nodes(const TreeSize& s) const;
  // A step drafted `used` from c, ran `levels` drafter levels (fewer near the image's end) and
  // accepted `accepted` drafts, committing positions [c, end): the updated size is recorded there.
  void record(int64_t c, int64_t end, const TreeSize& used, int64_t levels, int64_t accepted);
  // The size after a step: alpha = accepted / levels against beta.
  TreeSize update(const TreeSize& used, int64_t levels, int64_t accepted) const;

 private:
  AdaptiveTreeOptions o_;
  int64_t width_;
  std::vector<TreeSize> recorded_;  // per position: the size after the step that committed it
};

}  // namespace vkspec
