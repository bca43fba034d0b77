#include "python/run_options.h"

#include "cli/method_options.h"
#include "cli/sharded_images.h"
#include "common/error.h"
#include "frontend/arg_parser.h"

namespace vkspec::python {

RunOptions parse_run_options(const std::string& command, const std::string& method,
                             const std::vector<std::string>& args) {
  frontend::OptionTable table = frontend::sampler_option_table();
  frontend::append_options(table, cli::method_option_table());
  frontend::append_options(table, cli::batch_options());
  frontend::append_options(table, {{"--caption-embeddings", "FILE", "a text-to-image model's condition"},
                                   {"--prompt", "TEXT", "a prompt-driven model's condition (Janus-Pro)"}});
  frontend::ArgParser ap(command, table);
  ap.parse(args);
  RunOptions run;
  run.method = method;
  const MethodOptions given = cli::given_method_options(ap);
  cli::check_used(given, {method});
  run.options = cli::options_for(method, given);
  run.sampler = frontend::sampler_overrides(ap);
  run.batch = cli::batch_from(ap, {method}, command.c_str());
  if (auto file = ap.get("--caption-embeddings"))
    run.caption = std::make_shared<CaptionEmbeddings>(CaptionEmbeddings::load(*file));
  run.prompt = ap.get("--prompt");
  if (run.caption && run.prompt) throw Error(command + ": prompt and captions exclude each other");
  return run;
}

std::vector<StrategyInputs> image_inputs(const RunOptions& run, const Gpt& target, const std::string& model_path,
                                         const std::vector<uint64_t>& seeds, const std::vector<int64_t>& classes) {
  const GptConfig& cfg = target.config();
  const std::shared_ptr<const Condition> given = run.prompt ? target.prompt_condition(*run.prompt) : run.caption;
  if (given) {
    if (!classes.empty())
      throw Error(std::string("classes and ") + (run.prompt ? "a prompt" : "captions") + " exclude each other");
    given->check(cfg);
  } else if (cfg.num_classes < 1) {
    throw Error(model_path + " (" + cfg.family + ") takes " +
                (cfg.input == ConditionInput::Prompt ? "a prompt: give prompt=TEXT"
                                                     : "captions: give captions (a caption embedding file or array)"));
  }
  if (!classes.empty() && classes.size() != seeds.size())
    throw Error("classes: " + std::to_string(classes.size()) + " classes for " + std::to_string(seeds.size()) +
                " images");
  const SamplerSettings ss = run.sampler.applied_to(SamplerSettings::from_defaults(cfg.defaults));
  std::vector<StrategyInputs> inputs;
  for (size_t i = 0; i < seeds.size(); ++i) {
    const int64_t cls = classes.empty() ? static_cast<int64_t>(i) % std::max<int64_t>(cfg.num_classes, 1) : classes[i];
    if (!given && (cls < 0 || cls >= cfg.num_classes))
      throw Error("classes: class " + std::to_string(cls) + " is not in [0, " + std::to_string(cfg.num_classes - 1) +
                  "] (" + model_path + ")");
    StrategyInputs in;
    in.condition = given ? given : std::make_shared<ClassLabel>(cls);
    in.seed = seeds[i];
    in.sampler = ss;
    in.options = run.options;
    inputs.push_back(std::move(in));
  }
  return inputs;
}

}  // namespace vkspec::python
