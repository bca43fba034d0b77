#include "decoding/eagle_lane.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "common/error.h"
#include "decoding/candidate_tree.h"
#include "engine/model/eagle_drafter.h"
#include "engine/ops/draft_tokens.h"
#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

EagleDrafter& checked_eagle(const ModelSet& m, const std::string& method) {
  if (!m.eagle)
    throw Error(method + ": needs an EAGLE drafter (--eagle-drafter FILE, trained on the target by "
                         "tools/train_eagle_drafter.py)");
  return *m.eagle;
}

// Tree tests run a rule as the exact test against its relaxed target, node by node.
std::unique_ptr<AcceptRule> bind_tree_rule(const AcceptChoice& c, const ModelSet& models, const std::string& method,
                                           int64_t max_rows) {
  if (!c.descriptor().relaxes_target)
    throw Error(method + ": acceptance rule " + c.descriptor().name +
                " cannot judge a draft tree (it is no relaxed "
                "target; the window and draft-model methods take it)");
  return bind_accept_rule(c, models, method, max_rows);
}

}  // namespace

int64_t eagle_max_queries(const EagleTreeOptions& o) { return 1 + o.nodes + o.depth; }

int64_t eagle_max_queries(const EagleOptions& o) { return eagle_max_queries(o.tree) + (o.skip ? o.tree.depth : 0); }

EagleLane::EagleLane(std::string method, const ModelSet& models, TargetSession& target, const EagleOptions& options,
                     int64_t rows)
    : method_(std::move(method)),
      t_(target),
      eagle_(checked_eagle(models, method_)),
      opt_(options),
      rows_(rows),
      step_tree_(options.tree),
      rule_(bind_tree_rule(options.rule, models, method_, eagle_max_queries(options))),
      cls_(models.target->config().cls_token_num),
      drafter_cache_(eagle_.make_cache(rows, eagle_max_expanded(options.tree))),
      tree_rows_(*models.ctx, eagle_max_queries(options), method_) {
  const EagleTreeOptions& o = opt_.tree;
  if (opt_.adaptive && (o.kind != EagleTreeKind::Dynamic || opt_.sampled))
    throw Error(method_ + ": an adaptive tree is a dynamic tree of top tokens");
  const int64_t needed = drafter_queries_ = std::max(o.depth + 1, eagle_max_frontier(o));
  if (eagle_.max_queries() < needed)
    throw Error(method_ + ": the EAGLE drafter was loaded for " + std::to_string(eagle_.max_queries()) +
                " queries, the tree needs " + std::to_string(needed));
  Context& ctx = *models.ctx;
  const GptConfig& cfg = models.target->config();
  const int64_t max_q = eagle_max_queries(opt_), V = cfg.vocab_size, N = cfg.image_tokens();
  const int64_t D = cfg.dim, E = eagle_max_expanded(o);
  hidden_ = ctx.tensor(DType::F32, {rows * max_q, D}, name() + " target features");
  features_ = ctx.tensor(DType::F32, {rows * needed, D}, name() + " drafter input features");
  g_ = ctx.tensor(DType::F32, {rows * E, D}, name() + " drafted features");
  last_logits_ = ctx.tensor(DType::F32, {rows, V}, name() + " catch-up logits");
  q_ = ctx.tensor(DType::F32, {needed, V}, name() + " draft distributions");
  if (opt_.sampled) q_store_ = ctx.tensor(DType::F32, {E, V}, name() + " candidates' draft distributions");
  if (shaped_on_device())
    draft_tokens_ = ctx.tensor(DType::U32, {1 + o.nodes}, name() + " candidates", MemoryUsage::Readback);
  if (!opt_.sampled) {
    top_tokens_ = ctx.tensor(DType::U32, {E, max_top_width()}, name() + " top tokens");
    top_values_ = ctx.tensor(DType::F32, {E, max_top_width()}, name() + " top tokens' probabilities");
  }
  if (!shaped_on_device()) allocate_dynamic_tree(ctx);
  q_tree_ = ctx.tensor(DType::F32, {max_q, V}, name() + " candidate point masses");
  residuals_ = ctx.tensor(DType::F32, {max_q, V}, name() + " residual distributions");
  if (!rule_->exact()) {
    relaxed_ = ctx.tensor(DType::F32, {max_q, V}, name() + " relaxed targets");
    rejected_q_ = ctx.tensor(DType::F32, {max_q, V}, name() + " draft distributions after a rejection");
  }
  zeros_ = ctx.tensor(DType::F32, {1, V}, name() + " zero distribution");
  positions_ = ctx.tensor(DType::U32, {N + 1}, name() + " positions");
  std::vector<uint32_t> iota(static_cast<size_t>(N + 1));
  std::iota(iota.begin(), iota.end(), 0u);
  ctx.upload(positions_, iota.data(), iota.size() * 4);
  tokens_ = ctx.tensor(DType::U32, {max_q}, name() + " candidate tokens", MemoryUsage::Upload);
  accept_ = ctx.tensor(DType::U32, {max_q}, name() + " acceptances", MemoryUsage::Readback);
  final_ = ctx.tensor(DType::U32, {max_q}, name() + " next tokens", MemoryUsage::Readback);
  drafter_batch_ = std::make_unique<GptBatch>(ctx, eagle_.config(), rows, needed, drafter_cache_.slots());
  if (opt_.skip) allocate_skipping(ctx, models);
  t_.stream().fill(zeros_.view(), 0u);  // runs with the first submit
}

EagleLane::~EagleLane() = default;

void EagleLane::start(const Image& image, std::vector<const Condition*> conditions) {
  image_ = image;
  conditions_ = std::move(conditions);
  steps_ = 0;
  step_tree_ = opt_.tree;
  step_levels_ = 0;
  if (opt_.adaptive)
    adaptive_ = std::make_unique<AdaptiveTreeShape>(*opt_.adaptive, t_.config().grid_size, image_tokens());
  drafter_valid_ = 0;
  feature_rows_.clear();
  features_from_ring_ = last_skipped_ = false;
  hidden_queries_ = 0;
  repairs_.clear();
}

int32_t EagleLane::checked_token(uint32_t token, int64_t position) const {
  if (token >= static_cast<uint32_t>(vocab()))
    throw Error(method_ + ": the GPU resolved position " + std::to_string(position) + " of the image of seed " +
                std::to_string(in().seed) + " to token " + std::to_string(token) + ", outside the vocabulary");
  return static_cast<int32_t>(token);
}

void EagleLane::choose_step_tree(int64_t c) {
  step_levels_ = 0;
  if (!adaptive_) return;
  step_size_ = adaptive_->at(c);
  step_tree_.depth = step_size_.depth;
  step_tree_.topk = step_size_.width;
  step_tree_.nodes = adaptive_->nodes(step_size_);
}

void EagleLane::record_step_size(int64_t c, int64_t levels, int64_t accepted, StepEvent& e) {
  if (!adaptive_) return;
  adaptive_->record(c, committed(), step_size_, levels, accepted);
  e.tree_depth = static_cast<int32_t>(step_size_.depth);
  e.tree_width = static_cast<int32_t>(step_size_.width);
}

TensorView EagleLane::top_rows(const Tensor& table, int64_t first, int64_t m) const {
  const int64_t k = top_width();
  return table.view().reshape({table.numel()}).rows(first * k, m * k).reshape({m, k});
}

EagleLane::Node EagleLane::root_node(int64_t c) const {
  return {-1, c - 1, c > 0 ? grid()[static_cast<size_t>(c - 1)] : 0, cls_ + c - 1, false, -1, -1};
}

std::vector<EagleLane::Node> EagleLane::verified_tree(const DraftTreeBuilder& b, int64_t c, bool drawn) const {
  std::vector<Node> tree = {root_node(c)};
  // The verified tree: the first node of each depth in its position's slot, the others in scratch.
  const std::vector<int32_t> sel = b.select();
  const std::vector<DraftTreeNode>& nodes = b.nodes();
  std::vector<int32_t> index(nodes.size(), -1);
  index[0] = 0;
  std::set<int32_t> depth_seen;
  int64_t scratch = t_.config().seq_len();
  for (size_t i = 1; i < sel.size(); ++i) {
    const DraftTreeNode& nd = nodes[static_cast<size_t>(sel[i])];
    const int64_t pos = c + nd.depth - 1;
    const bool canonical = depth_seen.insert(nd.depth).second;
    index[static_cast<size_t>(sel[i])] = static_cast<int32_t>(tree.size());
    tree.push_back({index[static_cast<size_t>(nd.parent)], pos, static_cast<int32_t>(nd.token),
                    canonical ? cls_ + pos : scratch++, !canonical, g_row_[static_cast<size_t>(nd.parent)],
                    drawn ? sel[i] : -1});
  }
  return tree;
}

}  // namespace vkspec
