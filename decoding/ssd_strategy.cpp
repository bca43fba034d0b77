// SSD, Spatially Speculative Decoding (Xiang et al. 2026), as the paper describes it: latent heads
// predict the target's own hidden states along the row (head h) and down the column (head v),
// recursively; the target's frozen output layer turns a predicted state into draft logits. A step
// either starts a block or runs one more auto-correcting round on the current one:
//  - block start at committed position c (row r, column x): the first --row-tokens positions
//    continue the row horizontally from the newest exact state, h^k(h(c - 1)) (none at the start
//    of a row); the rest of the row comes from the vertical head on the exact row above,
//    v(h(m - W)); then --block-rows whole rows below are predicted in parallel, each row by v from
//    the row above it (exact where committed, predicted inside the block): a 2D block. In row 0
//    there is no row above: the block is the horizontal drafts alone until they reach the row's
//    end (the paper's horizontal phase, one verification round per block).
//  - every round verifies all of the block's undecided positions in one target forward; the
//    accepted prefix and the first rejected position (resampled) are committed, and the positions
//    after it take the target's own sample from this round as their new draft: the backbone's
//    prediction refines the block in place (auto-correction). After --rounds rounds the block's
//    rest is drafted anew by the heads from the newest exact states.
// --head-kind token runs the same schedule with the token heads (ModelSet::heads: h1..h4, v1, v2 on
// exact states only): the paper's latent-vs-token ablation. --correct coupled (ours, not the
// paper's) refines with SCD-MC's rule instead: a position after the rejection keeps the token its
// row resolved to (its draft if accepted, else the residual sample), a maximal coupling of its
// old draft with this round's p, so drafts that were right stay.
// Lossless: a head draft is a sample of its q (the draft distribution through the sampler's
// filters), which depends only on committed tokens and on Philox numbers keyed by (position,
// step); a refinement draft is a sample of the target's p given the drafts before it, and that p
// becomes its q, as in SJD. Exact accept-or-resample per position then yields the target's
// distribution (docs/methods.md).
#include <algorithm>

#include "common/error.h"
#include "decoding/speculative_base.h"
#include "engine/model/draft_heads.h"
#include "engine/model/latent_heads.h"
#include "engine/ops/sampler.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

constexpr int64_t kRowTokens = 5;  // the paper's horizontal drafts per row
constexpr int64_t kBlockRows = 1;
constexpr int64_t kRounds = 2;

enum class HeadKind { Latent, Token };

struct SsdOptions {
  HeadKind heads = HeadKind::Latent;
  int64_t row_tokens = kRowTokens, block_rows = kBlockRows, rounds = kRounds;
  bool coupled = false;  // --correct coupled: SCD-MC's refinement instead of the target's fresh samples
};

SsdOptions parse(const OptionValues& o, const GptConfig& t) {
  SsdOptions s;
  s.heads = o.choice("head-kind") == "token" ? HeadKind::Token : HeadKind::Latent;
  s.row_tokens = std::min(o.integer("row-tokens"), t.grid_size);
  s.block_rows = std::min(o.integer("block-rows"), t.grid_size - 1);
  s.rounds = o.integer("rounds");
  s.coupled = o.choice("correct") == "coupled";
  return s;
}

// The most drafts one block holds: the rest of a row and the rows below it.
int64_t max_block(const SsdOptions& o, const GptConfig& t) {
  return std::min((o.block_rows + 1) * t.grid_size, t.image_tokens());
}

// Where a block's drafts come from: positions [c, c + horizontal) continue the row from state
// c - 1, [c + horizontal, row end) come from the row above, then rows_below whole rows.
struct BlockPlan {
  int64_t end = 0, horizontal = 0, rows_below = 0;
  bool reaches_row_end = false;
};

class SsdStrategy : public SpeculativeStrategy {
 public:
  SsdStrategy(const ModelSet& models, const StrategyInputs& in, const SsdOptions& o)
      : SpeculativeStrategy("ssd", models, in, max_block(o, models.target->config())), opt_(o) {
    Context& ctx = *models.ctx;
    const int64_t N = image_tokens(), W = grid_width(), B = target().rows(), max_q = max_drafts() + 1;
    if (o.heads == HeadKind::Latent) {
      if (!models.latent_heads)
        throw Error("ssd: needs latent heads (--latent-heads FILE, tools/train_ssd_latent_heads.py)");
      if (models.latent_heads->max_rows() < W * B)
        throw Error("ssd: the latent heads were loaded for " + std::to_string(models.latent_heads->max_rows()) +
                    " rows per call, a grid row with CFG needs " + std::to_string(W * B));
    } else {
      if (!models.heads) throw Error("ssd: --head-kind token needs draft heads (--heads FILE)");
      const DraftHeads& h = *models.heads;
      for (int64_t k = 1; k <= 4 && h.index("h" + std::to_string(k)) >= 0; ++k) token_h_ = k;
      if (h.index("v1") < 0) throw Error("ssd: --head-kind token needs the vertical head v1 in " + h.path());
      gather_ = ctx.tensor(DType::F32, {max_q * B, target().config().dim}, "ssd gathered states");
    }
    drafts_.assign(static_cast<size_t>(N), 0);
    states_ = ctx.tensor(DType::F32, {N * B, target().config().dim}, "ssd states");
    q_ = ctx.tensor(DType::F32, {N, vocab()}, "ssd draft distributions");
    logits_ = ctx.tensor(DType::F32, {max_q * B, vocab()}, "ssd head logits");
    head_tok_ = ctx.tensor(DType::U32, {max_q}, "ssd head drafts", MemoryUsage::Readback);
    row_drafts_ = ctx.tensor(DType::U32, {max_q}, "ssd row drafts", MemoryUsage::Upload);
  }

 protected:
  void decode(StepEvent& e) override {
    const int64_t c = committed_, N = image_tokens();
    const uint32_t round = static_cast<uint32_t>(step_);
    const bool start = c >= block_end_ || rounds_left_ <= 0;
    if (start) {
      const BlockPlan plan = plan_block(c);
      block_end_ = plan.end;
      rounds_left_ = plan.reaches_row_end ? opt_.rounds : 1;
      if (plan.end > c) record_head_drafts(c, plan, round);
    }
    const int64_t D = block_end_ - c, Q = D + (c + D < N ? 1 : 0);
    CommandStream& s = stream();
    if (Q > D) s.fill(q_.view().rows(c + D, 1), 0u);  // the row without a draft: residual = p
    std::vector<uint32_t> fed(drafts_.begin() + c, drafts_.begin() + c + std::max<int64_t>(Q - 1, 0));
    const GptBatch& batch = target_batch(c, Q, fed);
    TensorView drafts;
    if (start && D > 0) {
      // Head drafts exist only on the GPU so far: copy them into the batch, and mark the row
      // without a draft.
      if (Q > 1) s.copy(head_tok_.view().rows(0, Q - 1), batch.token_ids().rows(c > 0 ? 1 : 0, Q - 1));
      if (Q > D) s.fill(head_tok_.view().rows(D, 1), ops::kNoToken);
      drafts = head_tok_.view().rows(0, Q);
    } else {
      std::vector<uint32_t> rows(drafts_.begin() + c, drafts_.begin() + c + D);
      rows.resize(static_cast<size_t>(Q), ops::kNoToken);
      models_.ctx->upload(row_drafts_, 0, rows.data(), rows.size() * 4);
      drafts = row_drafts_.view().rows(0, Q);
    }
    const ops::SampleMode fresh = opt_.coupled ? ops::SampleMode::None : ops::SampleMode::Categorical;
    const TensorView p = record_target(batch, c, Q, fresh, philox::purpose_word(philox::Purpose::Draft, round));
    keep_states(c, Q);
    const TensorView q_rows = q_.view().rows(c, Q);
    record_verify(p, q_rows, drafts, c, Q, round);
    s.copy(p, q_rows);  // a refined draft's q is this round's p
    const Outcome o = finish(Q);
    if (start && D > 0) models_.ctx->download(head_tok_, 0, drafts_.data() + c, static_cast<size_t>(D) * 4);

    const std::vector<uint32_t> window(drafts_.begin() + c, drafts_.begin() + c + D);
    const int64_t j = commit(e, c, Q, window, o);
    // The next draft of a later row is distributed as this round's p (its new q) either way: a
    // fresh sample of it, or the row's resolution of a draft that was a sample of its q.
    const std::vector<uint32_t>& next = opt_.coupled ? o.resolved : o.fresh;
    for (int64_t t = j + 1; t < D; ++t) drafts_[static_cast<size_t>(c + t)] = next[static_cast<size_t>(t)];
    --rounds_left_;
  }

 private:
  int64_t W() const { return grid_width(); }
  // States of positions [first, first + n), both CFG rows of each (position-major).
  TensorView states(int64_t first, int64_t n) const {
    const int64_t B = target_rows();
    return states_.view().rows(first * B, n * B);
  }
  int64_t target_rows() const { return target().rows(); }

  BlockPlan plan_block(int64_t c) const {
    BlockPlan p;
    const int64_t N = image_tokens(), r = c / W(), x = c % W(), row_end = (r + 1) * W();
    if (c == 0) return p;                                         // nothing to draft from yet: an ar step
    int64_t h = x == 0 ? 0 : std::min(opt_.row_tokens, W() - x);  // the horizontal head never wraps a row
    if (opt_.heads == HeadKind::Token) h = std::min(h, token_h_);
    p.horizontal = h;
    if (r == 0 && x + h < W()) {  // no row above: the horizontal phase
      p.end = c + h;
      return p;
    }
    p.reaches_row_end = true;
    int64_t below = std::min(opt_.block_rows, (N - row_end) / W());
    // Token heads reach two rows down from exact states only: a row below is v1 (or v2 past the
    // committed part) of the row above the current one.
    if (opt_.heads == HeadKind::Token) below = std::min<int64_t>(below, r >= 1 && models_.heads->index("v2") >= 0);
    p.rows_below = below;
    p.end = row_end + below * W();
    return p;
  }

  // Records the heads' drafts for [c, plan.end): their q rows into q_, tokens into head_tok_.
  void record_head_drafts(int64_t c, const BlockPlan& plan, uint32_t round) {
    CommandStream& s = stream();
    const int64_t D = plan.end - c, B = target_rows();
    target().set_stage(stage::kHeads);
    const TensorView logits = opt_.heads == HeadKind::Latent ? latent_logits(c, plan) : token_logits(c, plan);
    target().set_stage(stage::kSampling);
    ++head_forwards_;
    ops::SamplerParams sp = in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::Categorical,
                                                  philox::purpose_word(philox::Purpose::DraftHead, round));
    sp.cfg_layout = ops::CfgLayout::Interleaved;  // states are position-major: (cond, uncond) per position
    ops::sampler(s, logits.rows(0, D * B), positions(c, D), sp, q_.view().rows(c, D), head_tok_.view().rows(0, D));
  }

  TensorView latent_logits(int64_t c, const BlockPlan& plan) {
    using Axis = LatentHeads::Axis;
    LatentHeads& heads = *models_.latent_heads;
    CommandStream& s = stream();
    const int64_t r = c / W(), row_end = (r + 1) * W(), B = target_rows();
    for (int64_t k = 0; k < plan.horizontal; ++k)
      heads.apply(s, Axis::Horizontal, states(c + k - 1, 1), states(c + k, 1));
    const int64_t from = c + plan.horizontal, to = std::min(row_end, plan.end);
    if (from < to) heads.apply(s, Axis::Vertical, states(from - W(), to - from), states(from, to - from));
    for (int64_t i = 1; i <= plan.rows_below; ++i)
      heads.apply(s, Axis::Vertical, states((r + i - 1) * W(), W()), states((r + i) * W(), W()));
    const int64_t D = plan.end - c;
    const TensorView out = logits_.view().rows(0, D * B);
    heads.logits(s, states(c, D), out);
    return out;
  }

  TensorView token_logits(int64_t c, const BlockPlan& plan) {
    DraftHeads& heads = *models_.heads;
    const int64_t B = target_rows(), D = plan.end - c, row_end = (c / W() + 1) * W();
    // Each draft's (head, exact source position); the source's states are gathered in draft order.
    std::vector<CopyRegion> gather;
    std::vector<std::pair<int, int64_t>> picks;
    for (int64_t m = c; m < plan.end; ++m) {
      std::string head;
      int64_t src = 0;
      if (m < c + plan.horizontal) {
        head = "h" + std::to_string(m - c + 1);
        src = c - 1;
      } else if (m < row_end || m - W() < c) {
        head = "v1";
        src = m - W();
      } else {
        head = "v2";
        src = m - 2 * W();
      }
      const int k = heads.index(head);
      for (int64_t b = 0; b < B; ++b) {
        const int64_t row = static_cast<int64_t>(picks.size());
        gather.push_back({states_.view().rows(src * B + b, 1), gather_.view().rows(row, 1)});
        picks.push_back({k, row});
      }
    }
    stream().copy(gather);
    const TensorView out = heads.logits_at(stream(), gather_.view().rows(0, D * B), picks);
    return out;
  }

  // The target's final states of this round's queries, kept per position: the exact state of
  // every position committed this round (its query saw only committed tokens), read by later
  // blocks' heads; the others are overwritten before they are read as exact.
  void keep_states(int64_t c, int64_t q) {
    const TensorView hidden = last_hidden();
    const int64_t B = target_rows();
    std::vector<CopyRegion> copies;
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < q; ++t)
        copies.push_back({hidden.rows(b * q + t, 1), states_.view().rows((c + t) * B + b, 1)});
    stream().copy(copies);
  }

  SsdOptions opt_;
  int64_t token_h_ = 0;  // --head-kind token: horizontal heads h1..h{token_h_} present
  int64_t block_end_ = 0, rounds_left_ = 0;
  std::vector<uint32_t> drafts_;  // the current draft of each undecided block position
  Tensor states_;                 // f32 [N * B, dim]: exact or predicted state per (position, CFG row)
  Tensor q_;                      // f32 [N, V]: each current draft's distribution
  Tensor logits_;                 // f32 [max_q * B, V]: the heads' logits, interleaved CFG rows
  Tensor head_tok_;               // u32 [max_q]: head drafts (read back), kNoToken after the last
  Tensor row_drafts_;             // u32 [max_q], host-written: a refinement round's drafts
  Tensor gather_;                 // --head-kind token: f32 [max_q * B, dim]
};

StrategyDescriptor ssd() {
  StrategyDescriptor d;
  d.name = "ssd";
  d.order = 90;
  d.summary = "spatially speculative decoding: latent heads draft a row, then rows below as a block, refined in rounds";
  d.reference = "Xiang et al. 2026, Spatially Speculative Decoding (SSD)";
  d.options = {
      OptionSpec::choice("head-kind", "latent", {"latent", "token"},
                         "what drafts: the latent heads (--latent-heads, the paper's) or the token heads (--heads; "
                         "ablation)"),
      OptionSpec::integer("row-tokens", kRowTokens, 1, 1 << 20,
                          "positions of a row drafted horizontally per block (at most the grid width; token heads: "
                          "at most their largest horizontal offset)"),
      OptionSpec::integer("block-rows", kBlockRows, 0, 1 << 20,
                          "whole rows below the current one drafted by the vertical head per block (at most the grid "
                          "height - 1; token heads: at most 1)"),
      OptionSpec::integer("rounds", kRounds, 1, 1 << 20,
                          "auto-correcting verification rounds of a 2D block before its rest is drafted anew"),
      OptionSpec::choice("correct", "fresh", {"fresh", "coupled"},
                         "how a round refines the positions after a rejection: the target's own samples (the "
                         "paper's) or SCD-MC's maximal coupling (ours)")};
  d.lossless = [](const OptionValues&) { return true; };
  d.needs = [](const OptionValues& o) {
    StrategyNeeds n;
    (o.choice("head-kind") == "token" ? n.heads : n.latent_heads) = true;
    return n;
  };
  d.max_queries = [](const OptionValues& o, const GptConfig& t) { return max_block(parse(o, t), t) + 1; };
  d.make = [](const ModelSet& m, const StrategyInputs& in, const OptionValues& o) -> std::unique_ptr<Strategy> {
    if (!m.target) throw Error("a strategy needs a context and a target model");
    return std::make_unique<SsdStrategy>(m, in, parse(o, m.target->config()));
  };
  return d;
}

const RegisterStrategy kSsd(ssd());

}  // namespace
}  // namespace vkspec
