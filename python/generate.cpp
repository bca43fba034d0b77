#include "python/generate.h"

#include <algorithm>

#include "common/error.h"

namespace vkspec::python {

GenerateResult generate(Session& session, const RunOptions& run, const std::vector<uint64_t>& seeds,
                        const std::vector<int64_t>& classes, const std::function<void()>& between_steps) {
  if (seeds.empty()) throw Error("generate: no images (images must be at least 1)");
  const frontend::LoadedModels& loaded = session.models_for({{run.method, run.options, run.batch}}, run.batch);
  const std::vector<StrategyInputs> inputs =
      image_inputs(run, *loaded.target, session.catalog().path(frontend::ModelRole::Target), seeds, classes);
  GenerateResult result;
  result.sampler = inputs.empty() ? SamplerSettings{} : inputs[0].sampler;
  const ModelSet models = loaded.set(session.context());
  // Events are dropped (keep_events = false): the caller wants images and totals; steps() has them.
  for (size_t i = 0; i < inputs.size(); i += static_cast<size_t>(run.batch)) {
    const size_t end = std::min(inputs.size(), i + static_cast<size_t>(run.batch));
    std::vector<Generation> gens =
        generate_batch(run.method, models,
                       {inputs.begin() + static_cast<long>(i), inputs.begin() + static_cast<long>(end)}, false,
                       [&](size_t, const StepEvent&) { between_steps(); });
    for (Generation& g : gens) result.generations.push_back(std::move(g));
  }
  std::vector<const std::vector<int32_t>*> grids;
  for (const Generation& g : result.generations) grids.push_back(&g.tokens);
  result.images = session.decode(grids);
  return result;
}

StepRun::StepRun(std::shared_ptr<Session> session, const RunOptions& run, uint64_t seed, int64_t cls,
                 bool decode_images)
    : session_(std::move(session)), decode_images_(decode_images) {
  const frontend::LoadedModels& loaded = session_->models_for({{run.method, run.options, 1}}, 1);
  const GptConfig& cfg = loaded.target->config();
  grid_size_ = cfg.grid_size;
  const std::vector<StrategyInputs> inputs =
      image_inputs(run, *loaded.target, session_->catalog().path(frontend::ModelRole::Target), {seed},
                   run.caption || run.prompt ? std::vector<int64_t>{} : std::vector<int64_t>{cls});
  strategy_ = make_strategy(run.method, loaded.set(session_->context()), inputs[0]);
  session_->pin();
}

StepRun::~StepRun() {
  strategy_.reset();  // before the models may be reloaded
  session_->unpin();
}

StepRun::Step StepRun::next() {
  Step s{strategy_->step(), std::nullopt};
  if (decode_images_) {
    // Undecided cells decode as token 0, as the viewer's frames do (it dims them; here the grid says which).
    std::vector<int32_t> ids = s.event.grid;
    for (int32_t& t : ids) t = t == kUndecided ? 0 : t;
    s.image = std::move(session_->decode({&ids})[0]);
  }
  return s;
}

}  // namespace vkspec::python
