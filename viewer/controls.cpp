#include "viewer/controls.h"

#include <algorithm>
#include <cstdio>

#include "frontend/method_options_text.h"

namespace vkspec::viewer {

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
  c.class_id = static_cast<int>(opt.class_id);
  c.seed = static_cast<long long>(opt.seed);
  c.trace_image = static_cast<int>(opt.trace_image);
  c.trace_compare = static_cast<int>(opt.trace_compare);
  if (live && opt.class_id >= models.num_classes())
    throw Error("--class " + std::to_string(opt.class_id) + " out of range: the model has classes 0.." +
                std::to_string(models.num_classes() - 1));
  c.sampler = opt.sampler.applied_to(models.default_sampler());
  c.sampler.validate();
  return c;
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
