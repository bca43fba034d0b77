#include "cli/command_table.h"

#include "cli/method_options.h"
#include "frontend/model_catalog.h"
#include "frontend/sampler_options.h"

namespace vkspec::cli {
namespace {

template <frontend::OptionTable (*Options)()>
std::vector<OptionSection> one_section() {
  return {{"", "", Options()}};
}

// bench --synthetic is a mode with a parser of its own.
std::vector<OptionSection> bench_help_sections() {
  std::vector<OptionSection> s = bench_sections();
  s.push_back({"timing a generated model instead (--synthetic)", "vkspec bench --synthetic SHAPE [options]",
               bench_synthetic_options()});
  return s;
}

}  // namespace

frontend::OptionTable all_options(const std::vector<OptionSection>& sections) {
  frontend::OptionTable t;
  for (const OptionSection& s : sections) frontend::append_options(t, s.options);
  return t;
}

std::vector<OptionSection> run_option_sections() {
  const frontend::OptionTable models = frontend::model_file_option_table();
  // --drafter is both a model file and a method option; the model files' entry describes both.
  frontend::OptionTable methods;
  for (const frontend::OptionDoc& o : method_option_table()) {
    bool shown = false;
    for (const frontend::OptionDoc& m : models) shown = shown || m.name == o.name;
    if (!shown) methods.push_back(o);
  }
  return {{"model files", "", models},
          {"sampler settings", "", frontend::sampler_option_table()},
          {"method options (vkspec methods: each method's ranges and defaults)", "", methods}};
}

const std::vector<Command>& command_table() {
  static const std::vector<Command> table = {
      {"generate", "vkspec generate [options]",
       "Generates images with a decoding method (the shipped models unless --model/--vq name others) and writes "
       "them as one PNG grid; --trace keeps every step.",
       cmd_generate, generate_sections},
      {"bench", "vkspec bench [options]",
       "Compares methods on the same classes and seeds: speedup against ar, forwards, accepted length, latency, "
       "class accuracy and FID; --samples keeps every image's record so long evaluations can be split and "
       "resumed, --report merges such records into one table.",
       cmd_bench, bench_help_sections},
      {"methods", "vkspec methods [options]", "Lists every decoding method with its options (from the registry).",
       cmd_methods, one_section<methods_options>},
      {"families", "vkspec families [options]",
       "Lists the model families (from the registry): what their models take (a class, caption embeddings, a "
       "prompt) and the code each follows.",
       cmd_families, one_section<families_options>},
      {"devices", "vkspec devices [options]", "Lists the Vulkan devices and their capabilities.", cmd_devices,
       one_section<devices_options>},
      {"selftest", "vkspec selftest [options]", "Runs every GPU op against the CPU reference.", cmd_selftest,
       one_section<selftest_options>},
      {"bench-ops", "vkspec bench-ops [options]", "Times each op (GPU timestamps) next to the CPU reference.",
       cmd_bench_ops, one_section<bench_ops_options>},
      {"bench-text-encoder", "vkspec bench-text-encoder (--model FILE | --synthetic SHAPE) [options]",
       "Times the T5 text encoder on one prompt (LlamaGen text-to-image's condition), a converted file or a "
       "generated one of flan-t5-xl's or t5-v1_1's shape.",
       cmd_bench_text_encoder, one_section<bench_text_encoder_options>}};
  return table;
}

const Command* find_command(const std::string& name) {
  for (const Command& c : command_table())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace vkspec::cli
