#pragma once
// LANTERN (Jang et al., ICLR 2025, "LANTERN: Accelerating Visual Autoregressive Models with
// Relaxed Speculative Decoding"): speculative decoding whose test accepts a draft x when the
// target puts enough mass near x in latent space. The relaxed target p' moves the mass of x's
// nearest codebook entries (ModelSet::neighbours) onto x while TV(p', p) <= delta; the test and
// the residual are then the usual ones against p' (AcceptRule::Kind::Lantern).
// Drafts come from Jacobi self-drafting (--drafter jacobi, the default, training-free: SJD's
// window) or from the drafter model (--drafter model or FILE: draft-model SD).
// Options: --k (default 1000, clamped to the codebook), --delta (default 0.2), --window, and
// --init with Jacobi drafting.
#include <memory>

#include "decoding/window_strategy.h"

namespace vkspec {

class LanternJacobiStrategy : public WindowStrategy {
 public:
  LanternJacobiStrategy(const ModelSet& models, const StrategyInputs& in);
  const char* name() const override { return "lantern"; }
};

// "jacobi" unless the options name a drafter model.
bool lantern_uses_drafter_model(const MethodOptions& o);
std::unique_ptr<Strategy> make_lantern(const ModelSet& models, const StrategyInputs& in);

}  // namespace vkspec
