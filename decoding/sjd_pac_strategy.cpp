#include "decoding/sjd_pac_strategy.h"

namespace vkspec {

SjdPacStrategy::SjdPacStrategy(const ModelSet& models, const StrategyInputs& in, const SjdPacOptions& options)
    : Strategy("sjd-pac", models, in, sjd_pac_max_queries(options), options.window),
      opt_(check_sjd_pac_options(options, vocab())),
      rows_(*models.ctx, opt_, models.target->config(), 1),
      image_(opt_, models.target->config(), in.seed, rows_.store(0)),
      step_rows_(*models.ctx, opt_, sjd_pac_max_queries(opt_), vocab(), "sjd-pac") {}

void SjdPacStrategy::decode(StepEvent& e) {
  TargetSession& t = target();
  const int64_t c = committed_;
  t.set_stage(stage::kSampling);
  const std::vector<SjdPacImage::Node> nodes = image_.build_tree(t.stream(), grid_, c);
  const int64_t M = static_cast<int64_t>(nodes.size()), T = M + static_cast<int64_t>(image_.repairs().size());
  step_rows_.begin(T);
  image_.record_rows(t.stream(), nodes, c, step_rows_, 0, static_cast<uint32_t>(step_));
  const GptOutputs out = t.forward(t.batch(candidate_tree_queries(t, nodes, c, image_.repairs(), grid_)));
  step_rows_.record(t.stream(), t.ctx(), out.logits,
                    in_.sampler.op_params(vocab(), in_.seed, ops::SampleMode::None, 0));
  t.submit_and_wait();
  step_rows_.download(t.ctx());
  image_.commit(nodes, step_rows_.image(0, M), 0, grid_, committed_, e,
                [&](uint32_t token, int64_t n) { return checked_token(token, n); });
  ++nfe_;
}

}  // namespace vkspec
