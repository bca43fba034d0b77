#include "viewer/controls.h"

#include <algorithm>
#include <cstdio>

#include "frontend/method_options_text.h"
#include "viewer/kiosk_prompts.h"

namespace vkspec::viewer {
namespace {

// What the live runs are conditioned on, first: a class or a prompt, as the model takes.
void set_condition(Controls& c, const ViewerOptions& opt, const ViewerModels& models) {
  c.class_id = static_cast<int>(opt.class_id);
  if (models.replay()) return;
  if (!models.takes_prompt()) {
    if (opt.prompt)
      throw Error("--prompt: " + models.target_name() + " takes class labels, not a prompt: give --class N");
    if (opt.class_id >= models.num_classes())
      throw Error("--class " + std::to_string(opt.class_id) + " out of range: the model has classes 0.." +
                  std::to_string(models.num_classes() - 1));
    return;
  }
  if (opt.class_given)
    throw Error("--class: " + models.target_name() + " takes a prompt, not a class: give --prompt TEXT");
  const std::string prompt = opt.kiosk ? "" : opt.prompt.value_or(example_prompts().front());
  if (prompt.size() >= sizeof(c.prompt))
    throw Error("--prompt has " + std::to_string(prompt.size()) + " bytes; the viewer's prompt box holds " +
                std::to_string(sizeof(c.prompt) - 1));
  std::snprintf(c.prompt, sizeof(c.prompt), "%s", prompt.c_str());
}

}  // namespace

Controls initial_controls(const ViewerOptions& opt, const std::vector<std::string>& methods,
                          const ViewerModels& models) {
  auto index_of = [&](const std::string& m) {
    auto it = std::find(methods.begin(), methods.end(), m);
    if (it == methods.end()) {
      std::string known;
      for (const auto& n : methods) known += (known.empty() ? "" : ", ") + n;
      throw Error("unknown method '" + m + "' (known: " + known + ")");
    }
    return static_cast<int>(it - methods.begin());
  };
  Controls c;
  const bool live = !models.replay();
  if (!opt.method.empty() && live) c.method = index_of(opt.method);
  if (!opt.compare.empty() && live) c.compare = index_of(opt.compare);
  const std::string options = frontend::format_method_options(opt.method_options);
  const std::string compare_options = frontend::format_method_options(opt.compare_options);
  std::snprintf(c.options, sizeof(c.options), "%s", options.c_str());
  std::snprintf(c.compare_options, sizeof(c.compare_options), "%s", compare_options.c_str());
  set_condition(c, opt, models);
  c.seed = static_cast<long long>(opt.seed);
  c.trace_image = static_cast<int>(opt.trace_image);
  c.trace_compare = static_cast<int>(opt.trace_compare);
  c.sampler = opt.sampler.applied_to(models.default_sampler());
  c.sampler.validate();
  return c;
}

std::shared_ptr<const Condition> condition_of(const Controls& c, const ViewerModels& models) {
  if (models.takes_prompt()) return models.prompt_condition(c.prompt);
  return std::make_shared<ClassLabel>(c.class_id);
}

std::vector<frontend::MethodRun> runs_of(const Controls& c, const std::vector<std::string>& methods) {
  c.sampler.validate();
  std::vector<frontend::MethodRun> runs = {
      {methods.at(static_cast<size_t>(c.method)), frontend::parse_method_options(c.options)}};
  if (c.compare >= 0)
    runs.push_back({methods.at(static_cast<size_t>(c.compare)), frontend::parse_method_options(c.compare_options)});
  return runs;
}

}  // namespace vkspec::viewer
