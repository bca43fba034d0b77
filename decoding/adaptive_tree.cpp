#include "decoding/adaptive_tree.h"

#include <algorithm>

#include "common/error.h"
#include "decoding/eagle_strategy.h"
#include "engine/ops/draft_tokens.h"

namespace vkspec {

std::vector<OptionSpec> adaptive_tree_option_specs() {
  const AdaptiveTreeOptions d;
  const int64_t levels = ops::kMaxCutLevels, k = kEagleSiblings;
  return {
      OptionSpec::integer("depth", d.start.depth, 1, levels, "the first step's tree depth (drafter levels)"),
      OptionSpec::integer("min-depth", d.min.depth, 1, levels, "the shallowest tree (the paper's bound l_d, ours)"),
      OptionSpec::integer("max-depth", d.max.depth, 1, levels, "the deepest tree"),
      OptionSpec::integer("topk", d.start.width, 1, k,
                          "the first step's width: proposals per expanded node, and nodes expanded per level"),
      OptionSpec::integer("min-topk", d.min.width, 1, k, "the narrowest tree (the paper's bound l_k, ours)"),
      OptionSpec::integer("max-topk", d.max.width, 1, k, "the widest tree"),
      OptionSpec::integer("nodes", d.nodes, 1, ops::kMaxCutRows - 1,
                          "the most candidates a tree verifies besides the root; a step verifies min(nodes, depth "
                          "x topk)"),
      OptionSpec::number("beta", d.beta, 0.0, 1.0,
                         "the acceptance threshold: accepted drafts / depth >= beta makes the next tree deeper "
                         "and narrower, below it shallower and wider"),
      OptionSpec::choice("init", "horizontal", {"horizontal", "vertical"},
                         "where a step's size starts: horizontal, the size recorded left of its first draft (above "
                         "it at a row start); vertical, the one above"),
      OptionSpec::choice("update", "bisect", {"bisect", "unit"},
                         "bisect: halve the distance to the bound; unit: move depth and width by one"),
      OptionSpec::choice("budget", "product", {"product", "fixed"},
                         "product: a step verifies min(nodes, depth x topk); fixed (ours): nodes at every size, "
                         "the size moving only where EAGLE-2's reranking may place them"),
  };
}

AdaptiveTreeOptions parse_adaptive_tree_options(const OptionValues& o) {
  AdaptiveTreeOptions a;
  a.start = {o.integer("depth"), o.integer("topk")};
  a.min = {o.integer("min-depth"), o.integer("min-topk")};
  a.max = {o.integer("max-depth"), o.integer("max-topk")};
  a.nodes = o.integer("nodes");
  a.beta = o.number("beta");
  a.init = o.choice("init") == "vertical" ? AdaptiveTreeOptions::Init::Vertical : AdaptiveTreeOptions::Init::Horizontal;
  a.update = o.choice("update") == "unit" ? AdaptiveTreeOptions::Update::Unit : AdaptiveTreeOptions::Update::Bisect;
  a.budget = o.choice("budget") == "fixed" ? AdaptiveTreeOptions::Budget::Fixed : AdaptiveTreeOptions::Budget::Product;
  auto ordered = [&](const char* what, int64_t lo, int64_t start, int64_t hi) {
    if (lo > start || start > hi)
      throw Error(o.method() + ": needs --min-" + what + " <= --" + what + " <= --max-" + what + ", got " +
                  std::to_string(lo) + ", " + std::to_string(start) + ", " + std::to_string(hi));
  };
  ordered("depth", a.min.depth, a.start.depth, a.max.depth);
  ordered("topk", a.min.width, a.start.width, a.max.width);
  return a;
}

EagleTreeOptions adaptive_largest_tree(const AdaptiveTreeOptions& a) {
  EagleTreeOptions t;
  t.kind = EagleTreeKind::Dynamic;
  t.depth = a.max.depth;
  t.topk = a.max.width;
  t.nodes = a.budget == AdaptiveTreeOptions::Budget::Fixed ? a.nodes : std::min(a.nodes, a.max.depth * a.max.width);
  return t;
}

AdaptiveTreeShape::AdaptiveTreeShape(const AdaptiveTreeOptions& o, int64_t grid_width, int64_t image_tokens)
    : o_(o), width_(std::max<int64_t>(grid_width, 1)), recorded_(static_cast<size_t>(image_tokens)) {}

TreeSize AdaptiveTreeShape::at(int64_t c) const {
  auto recorded = [&](int64_t p) { return p >= 0 && p < c ? recorded_[static_cast<size_t>(p)] : o_.start; };
  const bool row_start = c % width_ == 0;
  if (o_.init == AdaptiveTreeOptions::Init::Vertical || row_start)
    return c >= width_ ? recorded(c - width_) : recorded(c - 1);
  return recorded(c - 1);
}

int64_t AdaptiveTreeShape::nodes(const TreeSize& s) const {
  return o_.budget == AdaptiveTreeOptions::Budget::Fixed ? o_.nodes : std::min(o_.nodes, s.depth * s.width);
}

TreeSize AdaptiveTreeShape::update(const TreeSize& used, int64_t levels, int64_t accepted) const {
  const bool positive = static_cast<double>(accepted) >= o_.beta * static_cast<double>(std::max<int64_t>(levels, 1));
  // Halving rounds away from the start, so a size one short of its bound still reaches it.
  auto toward = [&](int64_t v, int64_t bound) {
    if (o_.update == AdaptiveTreeOptions::Update::Unit) return v + (bound > v) - (bound < v);
    return bound >= v ? v + (bound - v + 1) / 2 : v - (v - bound + 1) / 2;
  };
  if (positive) return {toward(used.depth, o_.max.depth), toward(used.width, o_.min.width)};
  return {toward(used.depth, o_.min.depth), toward(used.width, o_.max.width)};
}

void AdaptiveTreeShape::record(int64_t c, int64_t end, const TreeSize& used, int64_t levels, int64_t accepted) {
  const TreeSize next = levels > 0 ? update(used, levels, accepted) : used;  // no tree: nothing learned
  for (int64_t p = std::max<int64_t>(c, 0); p < end && p < static_cast<int64_t>(recorded_.size()); ++p)
    recorded_[static_cast<size_t>(p)] = next;
}

}  // namespace vkspec
