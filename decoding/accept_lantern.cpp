// LANTERN's relaxed acceptance (Jang et al., ICLR 2025): the exact test and residual against a
// relaxed target p', which moves the mass of the draft x's nearest codebook neighbours onto x
// while TV(p', p) <= delta (ops::relax_neighbourhood). Lossy, and not by at most delta per
// committed token: p' depends on the draft, so several drafts can each pull a shared neighbour's
// mass onto themselves. What holds for the committed token's distribution O (docs/methods.md,
// "what the relaxation costs per token"; tests/test_relaxed_tv.cpp), with m_x <= delta the mass
// moved onto draft x:
//   TV(O, p) <= delta + sum_x min(max(q(x) - p(x), 0), m_x) <= delta + min(TV(p, q), n delta),
// n the number of tokens q over-weights; an adversarial 5-token case reaches 2.7 delta.
#include <algorithm>
#include <cfloat>

#include "common/error.h"
#include "decoding/accept_rule.h"
#include "decoding/neighbour_options.h"
#include "decoding/strategy.h"
#include "engine/model/codebook_neighbours.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

constexpr int64_t kDefaultK = 1000;
constexpr double kDefaultDelta = 0.2;

// Total variation never exceeds 1, but a float sum of a row may by an ulp: delta = 1 admits all.
float relax_delta(double delta) { return delta >= 1.0 ? FLT_MAX : static_cast<float>(delta); }

class LanternRule final : public AcceptRule {
 public:
  LanternRule(const OptionValues& o, const ModelSet& models, const std::string& method, int64_t max_rows)
      : AcceptRule(find_accept_rule("lantern")),
        table_(neighbour_table(models, neighbour_metric_of(o), method)),
        k_(static_cast<uint32_t>(std::min(o.integer("k"), table_.k_max()))),
        delta_(relax_delta(o.number("delta"))),
        ctx_(*models.ctx),
        max_rows_(max_rows),
        method_(method) {}

  void record_resolution(CommandStream& s, const JudgedRows& rows, const TensorView& accept,
                         const TensorView& resolved) override {
    // Allocated on first use: tree tests (eagle) bring their own scratch rows.
    if (!relaxed_.valid()) relaxed_ = ctx_.tensor(DType::F32, {max_rows_, rows.p.shape[1]}, method_ + " relaxed target");
    const TensorView target = record_target(s, rows.p, rows.drafts, relaxed_.view().rows(0, rows.drafts.numel()));
    record_exact_resolution(s, rows, target, accept, resolved);
  }
  TensorView record_target(CommandStream& s, const TensorView& p, const TensorView& drafts,
                           const TensorView& scratch) const override {
    ops::relax_neighbourhood(s, p, drafts, table_.table().view(), k_, delta_, scratch);
    return scratch;
  }

 private:
  const CodebookNeighbours& table_;
  uint32_t k_;
  float delta_;
  Context& ctx_;
  int64_t max_rows_;
  std::string method_;
  Tensor relaxed_;  // f32 [max_rows, V]
};

AcceptRuleDescriptor lantern() {
  AcceptRuleDescriptor d;
  d.name = "lantern";
  d.order = 10;
  d.summary = "LANTERN's relaxed test: the mass of the draft's latent neighbours (TV <= delta) counts for it";
  d.reference = "Jang et al., ICLR 2025, LANTERN: Accelerating Visual Autoregressive Models with Relaxed "
                "Speculative Decoding";
  d.relaxes_target = true;
  d.options = {OptionSpec::integer("k", kDefaultK, 1, 65536, "nearest codebook entries pooled (clamped to the table)"),
               OptionSpec::number("delta", kDefaultDelta, 0.0, 1.0,
                                  "the most probability mass moved onto a draft, TV(p', p) (a committed token can "
                                  "move further, docs/methods.md)"),
               neighbour_metric_spec()};
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
