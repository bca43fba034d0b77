// The exact test of speculative sampling (Leviathan et al. 2023; Chen et al. 2023): accept x ~ q
// with probability min(1, p(x)/q(x)), else resample from norm(max(p - q, 0)); the resolved token
// is an exact sample of p.
#include "decoding/accept_rule.h"
#include "decoding/fault_injection.h"

namespace vkspec {
namespace {

class ExactRule final : public AcceptRule {
 public:
  using AcceptRule::AcceptRule;
  void record_resolution(CommandStream& s, const JudgedRows& rows, const TensorView& accept,
                         const TensorView& resolved) override {
    record_exact_resolution(s, rows, rows.p, accept, resolved, skip_residual_);
  }
  TensorView record_target(CommandStream&, const TensorView& p, const TensorView&, const TensorView&) const override {
    return p;
  }

 private:
  const bool skip_residual_ = active_faults().skip_residual;  // bound while the strategy is built
};

AcceptRuleDescriptor exact() {
  AcceptRuleDescriptor d;
  d.name = "exact";
  d.order = 0;
  d.summary = "speculative sampling's test, u < min(1, p(x)/q(x)), and residual: lossless";
  d.reference = "Leviathan, Kalman, Matias, ICML 2023; Chen et al. 2023";
  d.lossless = true;
  d.relaxes_target = true;  // p' = p
  d.bind = [](const OptionValues&, const ModelSet&, const std::string&, int64_t) -> std::unique_ptr<AcceptRule> {
    return std::make_unique<ExactRule>(find_accept_rule("exact"));
  };
  return d;
}

const RegisterAcceptRule kExact(exact());

}  // namespace
}  // namespace vkspec
