#pragma once
// One image's decoding by EagleStrategy's method (decoding/eagle_strategy.h states it): the
// drafter's cache and catch-up, the tree grown from the committed position, its tests, the walk
// and the commit, vvs's skipped rounds. EagleStrategy runs one lane; EagleBatchStrategy
// (decoding/eagle_batch_strategy.h) runs one per image of a batch, every lane's tree verified in
// one ragged target forward, each lane's drafter forwards in the same submit.
//
// A step, in phases the owner calls in order (the batch calls each phase for every lane first):
//   begin()    chooses the step's tree; a tree the host must see before the forward (a relaxed
//              rule's, one a vvs round may skip) is grown and cut now: true when it needs a submit;
//   prepare()  after that submit: a skipped round commits (false); otherwise grows the tree whose
//              shape the forward's submit decides (static trees, EAGLE-2's cut on the device);
//   add_queries() the tree's and the repairs' target queries;
//   record_into() what the device writes into the target's batch (the cut, the drawn tokens);
//   record_after() the tests on the lane's rows of the target's probabilities, and the features
//              the next catch-up reads;
//   finish()   after the submit: the walk and the commit.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoding/adaptive_tree.h"
#include "decoding/candidate_tree.h"
#include "decoding/eagle_tree.h"
#include "decoding/speculative_base.h"
#include "decoding/vvs_schedule.h"

namespace vkspec {

class EagleDrafter;

// Philox rounds of a node's children: step * kEagleSiblings + rank (so --topk is at most this).
inline constexpr uint32_t kEagleSiblings = 64;

struct EagleOptions {
  EagleTreeOptions tree;
  // Candidates: the drafter's most likely tokens tested as point masses (EAGLE-2's), or (ours)
  // independent samples of its distribution q tested with min(1, p/q) against the running
  // residual norm(max(r - q, 0)) (multi-draft speculative sampling; static and chain trees, whose
  // shape does not depend on which tokens were drawn).
  bool sampled = false;
  AcceptChoice rule;  // exact, or a rule that relaxes the target (AcceptRuleDescriptor::relaxes_target)
  // adaptive-tree: each step's depth and width chosen from its neighbours' (decoding/adaptive_tree.h)
  // within `tree`, a dynamic tree of the largest size.
  std::optional<AdaptiveTreeOptions> adaptive;
  // vvs: rounds whose dynamic tree is committed along one path without a target forward
  // (decoding/vvs_schedule.h); the next forward writes that chain's KV beside its tree.
  std::optional<VvsOptions> skip;
};

// Queries of the largest target forward: the root, the tree, the repairs of the previous step.
int64_t eagle_max_queries(const EagleTreeOptions& o);
// The same with a skipped round's chain (vvs): up to depth more.
int64_t eagle_max_queries(const EagleOptions& o);

class EagleLane {
 public:
  // The image a lane decodes, owned by the strategy: its inputs (seed, sampler), its tokens and
  // counters, which the lane advances.
  struct Image {
    const StrategyInputs* in = nullptr;
    std::vector<int32_t>* grid = nullptr;
    int64_t *committed = nullptr, *nfe = nullptr, *draft_forwards = nullptr;
  };
  // target: the session whose stream, cache slots and forwards the lane shares; rows: its batch
  // rows per image (2 with CFG).
  EagleLane(std::string method, const ModelSet& models, TargetSession& target, const EagleOptions& options,
            int64_t rows);
  ~EagleLane();
  EagleLane(const EagleLane&) = delete;
  EagleLane& operator=(const EagleLane&) = delete;

  // Starts an image afresh: conditions are its batch rows' (the drafter's queries embed them).
  void start(const Image& image, std::vector<const Condition*> conditions);

  bool begin(StepEvent& e);
  bool prepare(StepEvent& e);
  // The step's target queries (tree nodes, then repairs).
  int64_t queries() const { return static_cast<int64_t>(tree_.size() + repairs_.size()); }
  // Adds them to q and mb's first rows; returns the scratch slots they take after the sequence
  // (a batch's padding queries write the ones after).
  int64_t add_queries(GptQueries& q, ops::AttentionMaskBuilder& mb) const;
  // The step's queries when the lane is a forward's only image: add_queries' with their mask and
  // the rows' conditions (a batch pads each lane's instead: LaneBatchStrategy::padded_lane_queries).
  GptQueries step_queries(const std::vector<const Condition*>& conditions) const;
  // lane: its image's index in the batch (its token ids, its blocks of meta rows), of `images`;
  // T: queries per image.
  void record_into(const GptBatch& batch, int64_t lane, int64_t images, int64_t T);
  // probs: the lane's T rows of the target's probabilities; hidden: the forward's final hidden
  // states (rows of batch row b = r * images + lane at b * T).
  void record_after(const TensorView& probs, const TensorView& hidden, int64_t lane, int64_t images, int64_t T);
  void finish(StepEvent& e);

  const std::string& name() const { return method_; }
  // The most queries of the lane's target forwards, and the scratch slots they use.
  int64_t max_queries() const { return eagle_max_queries(opt_); }

 private:
  struct Node {
    int32_t parent;    // index in the verified tree; -1 for the root
    int64_t position;  // image position of its token (root: the last committed one, -1 at c = 0)
    int32_t token;
    int64_t slot;      // target KV slot
    bool alternate;    // in a scratch slot; re-fed next step when accepted
    int64_t q_row;     // sampled candidates: the row of q_store_ it was drawn from
    int32_t draft_id;  // sampled candidates: its row of draft_tokens_, where the GPU drew its token
  };
  // How the step's tree is made, as begin() found it.
  enum class Plan { Root, HostCut, MaySkip, Device };

  // EAGLE-2's dynamic tree from c > 0, grown on the device (the drafter's catch-up, then per level
  // its top tokens, ops::draft_tree_level's pick of the next frontier with its tokens, mask rows
  // and features, and the drafter on it); returns its levels.
  int64_t grow_dynamic_tree(int64_t c);
  // Records drafter level `level` (>= 1) of a dynamic tree: its topk frontier rows picked from
  // level - 1's candidates, their drafter forward and their top tokens (g_ rows 1 + (level - 1) * topk ..).
  void record_device_level(int64_t level, int64_t c);
  // Where ops::draft_tree_cut writes the target's queries of the cut tree's rows 1 .. m - 1.
  struct CutQueryRows {
    TensorView tokens, rope, slots;
    ops::AttentionMask mask;
    ops::AttentionMask prefix;  // the root query's row (its caption's padding hidden); unset for the sink
  };
  // The rows the cut may keep: the root, then min(nodes, the candidates the levels can grow).
  int64_t cut_rows(int64_t levels) const;
  // The verified tree's cut_rows(levels) rows before the device cuts it: children of the root in
  // scratch slots, so the target's batch has their room (its slots' extent and mask words) and
  // the cut's rows past its nodes stay kNoToken children of the root (tested as rejected, dropped
  // after).
  std::vector<Node> placeholder_tree(int64_t c, int64_t levels) const;
  // Records ops::draft_tree_cut of the grown tree into `queries` (the target's batch's rows 1 ..
  // m - 1, or the relaxed rules' cut_sink_), the tests' rows and the tests' tokens.
  void record_cut(int64_t c, int64_t levels, const CutQueryRows& queries, int64_t m);
  // Records the cut into the target batch's queries of the tree (rows 1 .. m - 1 after the root at
  // each of `blocks`, the root rows of the batch's meta rows that hold the lane's tree: one, or one
  // per batch row where rows differ in caption padding or the batch is ragged), its ids from
  // `first_id`.
  void record_cut_into(const GptBatch& batch, int64_t c, int64_t levels, int64_t m, int64_t first_id,
                       const std::vector<int64_t>& blocks);
  // A tree the host reads before the forward: records the growth and the cut (its queries into
  // cut_sink_, unread); read_cut_tree() after the submit.
  void record_host_cut(int64_t c, int64_t levels);
  // After the submit: the cut tree (its m rows read back), without the padding.
  std::vector<Node> read_cut_tree(int64_t c, int64_t m);
  void allocate_dynamic_tree(Context& ctx);
  void allocate_skipping(Context& ctx, const ModelSet& models);  // vvs's ring and codebook
  GptBatch* level_batch(size_t level);                           // the drafter batch of a level, made on first use
  // Static and chain trees, and sampled candidates: records the whole tree, whose shape does not
  // depend on the tokens, with every token chosen on the GPU (draft_tokens_: drawn from its
  // parent's stored q, or the rank's entry of the parent's top tokens), for the same submit as
  // the target's forward.
  std::vector<Node> record_static_tree(int64_t c);
  // Whether a dynamic tree is cut before the forward, the host reading it back (a relaxed rule
  // records its tests node by node; placed line breaks are added to the queries on the host).
  bool cut_on_host() const { return !rule_->exact() || t_.config().line_breaks; }
  // Whether the tree's tokens are chosen on the GPU within the target's submit.
  bool shaped_on_device() const { return opt_.sampled || opt_.tree.kind != EagleTreeKind::Dynamic; }
  // Top tokens kept per expanded node (DraftTreeBuilder's: topk, fewer on a smaller vocabulary).
  int64_t top_width() const { return std::min(step_tree_.topk, vocab()); }
  int64_t max_top_width() const { return std::min(opt_.tree.topk, vocab()); }
  // Rows [first, first + m) of a [expanded, top width] table laid out at this step's width.
  TensorView top_rows(const Tensor& table, int64_t first, int64_t m) const;
  // An adaptive tree's size for the step from c (else the options' tree) into step_tree_.
  void choose_step_tree(int64_t c);
  // An adaptive tree's step from c that ran `levels` levels and accepted `accepted` drafts: its
  // size recorded at the positions it committed and on the event.
  void record_step_size(int64_t c, int64_t levels, int64_t accepted, StepEvent& e);
  Node root_node(int64_t c) const;
  // The verified tree from a grown builder: the first node of each depth in its position's slot,
  // the others in scratch slots; drawn: the tokens are the GPU's, by builder id.
  std::vector<Node> verified_tree(const DraftTreeBuilder& b, int64_t c, bool drawn) const;
  // After the sampler wrote q_ rows [0, m) of the nodes with g rows [g0, g0 + m): keeps what
  // their children are chosen from (sampled: the q rows in q_store_; top: their top tokens).
  void record_candidate_sources(int64_t m, int64_t g0);
  // Records the GPU's choice of builder nodes [first, end)'s tokens from their parents' stored
  // sources into draft_tokens_.
  void record_candidates(const DraftTreeBuilder& b, size_t first, int64_t c);
  // Records the drafter's catch-up on elements [drafter_valid_, c) and stores g(c - 1) as the
  // feature of tree node 0; q row 0 gets the root's draft distribution.
  void record_catch_up(int64_t c);
  // Records a static tree's drafter level on frontier nodes (builder ids) whose features are stored
  // by id, with `batch`; their tokens are in draft_tokens_ (chosen on the GPU), not in the builder.
  void record_level(const DraftTreeBuilder& b, const std::vector<int32_t>& frontier, int64_t c, GptBatch& batch);
  // probs: the tree's rows of the target's probabilities.
  void record_tests(const TensorView& probs, uint32_t round);
  // The candidates' tokens (tokens_, the batch's ids from first_id) and the q rows the tests read (q_tree_).
  void record_candidate_rows(const GptBatch& batch, int64_t first_id);
  // After the submit: the tokens the GPU chose, by draft_id (-1: kNoToken, no candidate).
  void resolve_device_tokens();
  // A static shape's node whose rank is past its parent's q mass (a top-k or top-p filter left
  // fewer tokens) gets kNoToken from ops::top_tokens, where the host builder makes no node: it
  // was tested as rejected without changing its parent's residual (ops::tree_tests; ranks come in
  // order, so it follows its valid siblings), and here it leaves the tree with its descendants
  // before the walk, so the walk, the commit and the proposals are those of the builder's tree.
  // (The relaxed rules' residual after it is renormalised once more: equal in distribution,
  // possibly not in the last bit.) Compacts accept_host_ and final_host_ alike; returns the kept
  // nodes' indices in the verified tree (their target query rows).
  std::vector<int32_t> drop_missing_candidates();
  // Walks the tree with the read-back tests, commits, and returns the accepted path (root first).
  std::vector<int32_t> walk_and_commit(StepEvent& e);

  // vvs (decoding/eagle_skip.cpp). A round from c > 0 that the schedule may skip (may_skip) grows
  // and cuts its tree, read back, and commits a path of it unverified (skip_grown_tree true); a
  // round the dynamic schedule declines after judging its tree verifies that tree.
  bool may_skip(int64_t c) const;
  bool skip_grown_tree(int64_t c, StepEvent& e);
  // The cut tree's root-to-leaf paths, as node indices after the root, leaves in the order of
  // their paths' node indices (EAGLE-2's candidate rows).
  std::vector<std::vector<int32_t>> leaf_paths(const std::vector<Node>& tree) const;
  // Commits the first `drafts` nodes of `path` unverified: the KV of the old root and all but the
  // last draft is written by the next forward (repairs), the drafter's next catch-up reads stale
  // features (the last `drafts` true ones, VVS's reuse_prev).
  void commit_unverified(const std::vector<Node>& tree, const std::vector<int32_t>& path, int64_t drafts, StepEvent& e);
  // After a verified forward: the true features of the elements its path (tree indices; kept: their
  // forward rows) and its repairs (rows tree_rows + r) give, kept in feature_ring_ (element m at row
  // m mod ring_rows_) for skipped rounds to reuse.
  void record_ring(const std::vector<int32_t>& path, const std::vector<int32_t>& kept);

  // The image's state, as Strategy has it for one image.
  std::vector<int32_t>& grid() { return *image_.grid; }
  const std::vector<int32_t>& grid() const { return *image_.grid; }
  int64_t& committed() { return *image_.committed; }
  int64_t committed() const { return *image_.committed; }
  const StrategyInputs& in() const { return *image_.in; }
  int64_t image_tokens() const { return static_cast<int64_t>(grid().size()); }
  int64_t vocab() const { return t_.config().vocab_size; }
  int32_t checked_token(uint32_t token, int64_t position) const;

  std::string method_;
  TargetSession& t_;
  EagleDrafter& eagle_;
  EagleOptions opt_;
  int64_t rows_;  // batch rows per image
  Image image_;
  std::vector<const Condition*> conditions_;
  int64_t steps_ = 0;           // the image's steps so far: its Philox round
  EagleTreeOptions step_tree_;  // this step's tree: opt_.tree, or an adaptive tree's size within it
  TreeSize step_size_;
  int64_t step_levels_ = 0;  // the drafter levels of this step's dynamic tree
  std::unique_ptr<AdaptiveTreeShape> adaptive_;
  std::unique_ptr<AcceptRule> rule_;
  int64_t cls_;
  KvCache drafter_cache_;
  // This step's: how its tree is made, the tree, the levels of a dynamic tree cut in the forward's
  // submit (its placeholder rows in tree_), the c it starts from, the repairs it feeds.
  Plan plan_ = Plan::Root;
  std::vector<Node> tree_;
  int64_t levels_ = 0, c_ = 0;
  int64_t forward_nodes_ = 0;  // the tree's rows of the forward (before missing candidates leave it)
  std::vector<int64_t> fed_repairs_;
  int64_t drafter_valid_ = 0;          // drafter elements [0, drafter_valid_) hold true features
  std::vector<int32_t> feature_rows_;  // rows of hidden_ holding f(drafter_valid_), f(drafter_valid_ + 1), ...
  bool features_from_ring_ = false;    // vvs after a skip: feature_rows_ are rows of feature_ring_
  bool last_skipped_ = false;
  int64_t ring_rows_ = 0;
  Tensor feature_ring_;          // f32 [rows * ring_rows_, dim]: recent true features by element
  std::vector<float> codebook_;  // vvs's dynamic schedule: the tokenizer's codebook, row-major
  int64_t codebook_dim_ = 0;
  int64_t hidden_queries_ = 0;         // queries per batch row of the forward hidden_ was copied from
  std::vector<int64_t> repairs_;       // positions to re-feed in their own slots
  std::vector<int64_t> drafter_slot_;  // per builder node: its drafter scratch slot (-1: none)
  std::vector<int32_t> g_row_;         // per builder node: its row of g_ (-1: not run)
  int64_t next_drafter_slot_ = 0, next_g_row_ = 0;
  int64_t drafter_queries_ = 0;                           // the most queries of a drafter forward
  std::unique_ptr<GptBatch> drafter_batch_;               // the catch-up
  std::vector<std::unique_ptr<GptBatch>> level_batches_;  // the levels of a tree, all in one submit
  Tensor hidden_;       // f32 [rows * max_q, dim]: the last target forward's final hidden states
  Tensor features_;     // f32 [rows * max_nodes, dim]: the drafter's input features of a forward
  Tensor g_;            // f32 [rows * max_nodes, dim]: g of each builder node, row b * max_nodes + id
  Tensor last_logits_;  // f32 [rows, V]: the catch-up's last element's logits
  Tensor q_;            // f32 [max_nodes, V]: draft distributions of a level (read back)
  Tensor q_store_;      // f32 [expanded, V]: sampled candidates: each expanded node's q, by g_ row
  Tensor q_tree_, residuals_, relaxed_, rejected_q_, zeros_, positions_;
  Tensor tokens_, accept_, final_;
  TreeTestRows tree_rows_;          // exact rule: ops::tree_tests' parent and position rows
  Tensor draft_tokens_;             // u32 [1 + nodes]: the GPU's candidates' tokens by builder id (read back)
  Tensor top_tokens_, top_values_;  // u32 / f32 [expanded, topk]: each expanded node's top tokens, by g_ row
  // Dynamic trees: the frontiers' state per level (ops::draft_tree_level), each level's picks, the
  // gather ids of the frontier's drafter input features, and the cut tree's rows (read back).
  Tensor tree_state_, choices_, gather_ids_, cut_tree_;
  // Trees cut before the forward: where the cut writes queries no forward reads (u32 [nodes], i32
  // [nodes, 3], u32 [nodes], u32 [nodes, 2], u32 [nodes, words]), so no target batch is made for it.
  struct {
    Tensor tokens, rope, slots, ranges, bits;
  } cut_sink_;
  std::vector<uint32_t> drawn_host_;
  std::vector<uint32_t> accept_host_, final_host_;
};

}  // namespace vkspec
