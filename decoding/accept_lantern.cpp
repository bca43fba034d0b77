// LANTERN's relaxed acceptance (Jang et al., ICLR 2025): the exact test and residual against a
// relaxed target p', which moves the mass of the draft x's nearest codebook neighbours onto x
// while TV(p', p) <= delta (ops::relax_neighbourhood). Lossy, and not by at most delta per
// committed token: p' depends on the draft, so several drafts can each pull a shared neighbour's
// mass onto themselves. What holds for the committed token's distribution O (docs/methods.md,
// "what the relaxation costs per token"; tests/test_relaxed_tv.cpp), with m_x <= delta the mass
// moved onto draft x:
//   TV(O, p) <= delta + sum_x min(max(q(x) - p(x), 0), m_x) <= delta + min(TV(p, q), n delta),
// n the number of tokens q over-weights; an adversarial 5-token case reaches 2.7 delta.
//
// --lambda L (>= 1) selects LANTERN++'s multiplicative budget instead (Park et al. 2025, the
// `lantern_delta > 1` branch of the released code, which overloads one flag; we give it its own):
// neighbours are admitted while their cumulative mass stays <= (L - 1) p(x), so p'(x) <= L p(x),
// and the test is the same exact test against that p'. L = 1 admits no mass: the exact rule.
// A rejection then leaves the code's residual, not the one against p': norm(max(p - q_N, 0)),
// q_N = q without x's first k listed neighbours (the code zeroes one entry past the k - 1 it
// pools), renormalised, when mass was moved onto x (ops::exclude_neighbourhood); p - q otherwise.
// The code's q also has the siblings already tried zeroed: it draws them without replacement;
// our sampled candidates are independent draws of q, for which q itself is the right term.
#include <algorithm>
#include <cfloat>

#include "common/error.h"
#include "decoding/accept_rule.h"
#include "decoding/neighbour_options.h"
#include "decoding/strategy.h"
#include "engine/model/codebook_neighbours.h"
#include "engine/ops/philox.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

constexpr int64_t kDefaultK = 1000;
constexpr double kDefaultDelta = 0.2;
constexpr double kLambdaOff = 0.0, kMaxLambda = 1e6;

// Total variation never exceeds 1, but a float sum of a row may by an ulp: delta = 1 admits all.
float relax_delta(double delta) { return delta >= 1.0 ? FLT_MAX : static_cast<float>(delta); }

// The budget delta + per_mass * p(x) of ops::relax_neighbourhood: LANTERN's delta, or with
// --lambda LANTERN++'s (lambda - 1) p(x). Methods without --delta (lantern++) read lambda only.
struct RelaxBudget {
  float delta = 0.0f, per_mass = 0.0f;
  bool multiplicative = false;  // LANTERN++'s (lambda 1 too, whose per_mass is 0)
};

RelaxBudget relax_budget(const OptionValues& o, const std::string& method) {
  const double lambda = o.declares("lambda") ? o.number("lambda") : kLambdaOff;
  if (lambda == kLambdaOff) return {relax_delta(o.number("delta")), 0.0f, false};
  if (lambda < 1.0)
    throw Error(method + ": --lambda must be >= 1 (p'(x) <= lambda p(x)), or 0 for LANTERN's additive --delta; got " +
                std::to_string(lambda));
  if (o.declares("delta") && o.given("delta"))
    throw Error(method + ": --delta and --lambda are two budgets (additive, multiplicative); give one");
  return {0.0f, static_cast<float>(lambda - 1.0), true};
}

class LanternRule final : public AcceptRule {
 public:
  LanternRule(const OptionValues& o, const ModelSet& models, const std::string& method, int64_t max_rows)
      : AcceptRule(find_accept_rule("lantern")),
        table_(neighbour_table(models, neighbour_metric_of(o), method)),
        k_(static_cast<uint32_t>(std::min(o.integer("k"), table_.k_max()))),
        budget_(relax_budget(o, method)),
        ctx_(*models.ctx),
        max_rows_(max_rows),
        method_(method) {}

  void record_resolution(CommandStream& s, const JudgedRows& rows, const TensorView& accept,
                         const TensorView& resolved) override {
    using philox::Purpose;
    // Allocated on first use: tree tests (eagle) bring their own scratch rows.
    const int64_t n = rows.drafts.numel(), V = rows.p.shape[1];
    if (!relaxed_.valid()) relaxed_ = ctx_.tensor(DType::F32, {max_rows_, V}, method_ + " relaxed target");
    const TensorView target = record_target(s, rows.p, rows.drafts, relaxed_.view().rows(0, n));
    if (!multiplicative()) return record_exact_resolution(s, rows, target, accept, resolved);
    if (!excluded_.valid()) excluded_ = ctx_.tensor(DType::F32, {max_rows_, V}, method_ + " q without neighbours");
    const Rejection r = record_rejection(s, rows.p, target, rows.q, rows.drafts, excluded_.view().rows(0, n));
    ops::spec_accept(s, target, rows.q, rows.drafts, rows.positions,
                     {rows.seed, philox::purpose_word(Purpose::Accept, rows.round), rows.keys}, accept);
    ops::spec_residual_sample(s, r.from, r.minus, rows.positions,
                              {rows.seed, philox::purpose_word(Purpose::Residual, rows.round), rows.keys}, resolved,
                              accept, rows.drafts);
  }
  TensorView record_target(CommandStream& s, const TensorView& p, const TensorView& drafts,
                           const TensorView& scratch) const override {
    ops::relax_neighbourhood(s, p, drafts, table_.table().view(), k_, budget_.delta, scratch, budget_.per_mass);
    return scratch;
  }
  Rejection record_rejection(CommandStream& s, const TensorView& p, const TensorView& target, const TensorView& q,
                             const TensorView& drafts, const TensorView& scratch) const override {
    if (!multiplicative()) return {target, q};
    const uint32_t count = static_cast<uint32_t>(std::min<int64_t>(k_, table_.k_max() - 1));
    ops::exclude_neighbourhood(s, q, p, target, drafts, table_.table().view(), count, scratch);
    return {p, scratch};
  }

 private:
  bool multiplicative() const { return budget_.multiplicative; }

  const CodebookNeighbours& table_;
  uint32_t k_;
  RelaxBudget budget_;
  Context& ctx_;
  int64_t max_rows_;
  std::string method_;
  Tensor relaxed_;   // f32 [max_rows, V]
  Tensor excluded_;  // f32 [max_rows, V]: LANTERN++'s q without the draft's neighbours
};

AcceptRuleDescriptor lantern() {
  AcceptRuleDescriptor d;
  d.name = "lantern";
  d.order = 10;
  d.summary = "LANTERN's relaxed test: the mass of the draft's latent neighbours (TV <= delta) counts for it";
  d.reference = "Jang et al., ICLR 2025, LANTERN: Accelerating Visual Autoregressive Models with Relaxed "
                "Speculative Decoding";
  d.relaxes_target = true;
  d.options = {
      OptionSpec::integer("k", kDefaultK, 1, 65536, "nearest codebook entries pooled (clamped to the table)"),
      OptionSpec::number("delta", kDefaultDelta, 0.0, 1.0,
                         "the most probability mass moved onto a draft, TV(p', p) (a committed token can "
                         "move further, docs/methods.md)"),
      neighbour_metric_spec(),
      OptionSpec::number("lambda", kLambdaOff, 0.0, kMaxLambda,
                         "LANTERN++'s multiplicative budget instead of --delta: neighbours' mass is moved "
                         "onto a draft while it stays <= (lambda - 1) p(x); >= 1 (1: the exact test), 0: off")};
  d.needs = [](const OptionValues&, StrategyNeeds& n) { n.neighbours = true; };
  d.bind = [](const OptionValues& o, const ModelSet& m, const std::string& method,
              int64_t max_rows) -> std::unique_ptr<AcceptRule> {
    return std::make_unique<LanternRule>(o, m, method, max_rows);
  };
  return d;
}

const RegisterAcceptRule kLantern(lantern());

}  // namespace
}  // namespace vkspec
