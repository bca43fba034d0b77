#pragma once
// One function per `vkspec` subcommand; each returns the process exit code. Each command's option
// table is what its parser accepts and what `vkspec <command> --help` prints (cli/command_table.h).
#include <string>
#include <vector>

#include "frontend/arg_parser.h"

namespace vkspec::cli {

using Args = std::vector<std::string>;

int cmd_devices(const Args& args);
int cmd_selftest(const Args& args);
int cmd_bench_ops(const Args& args);
int cmd_generate(const Args& args);
int cmd_bench(const Args& args);
// `methods [--markdown]`: the registered decoding methods and their options.
int cmd_methods(const Args& args);
// `families [--model FILE]`: the registered model families (and which one a file is).
int cmd_families(const Args& args);
// The usage lines naming every registered method.
std::string methods_usage();
// `bench --synthetic SHAPE`: forward timings of a generated LlamaGen-shaped model (cmd_bench hands over).
int cmd_bench_synthetic(const Args& args);
// `bench-text-encoder`: the T5 encoder's time for one prompt (a converted or generated encoder).
int cmd_bench_text_encoder(const Args& args);

// A group of options in a command's help.
struct OptionSection {
  std::string title;  // "" for the command's own options
  std::string usage;  // a synopsis of its own where the group is a mode ("vkspec bench --synthetic ...")
  frontend::OptionTable options;
};
// The groups' options in one table, for the parser.
frontend::OptionTable all_options(const std::vector<OptionSection>& sections);
// The groups every command that runs methods shares: model files, sampler settings, method options.
std::vector<OptionSection> run_option_sections();

frontend::OptionTable devices_options();
frontend::OptionTable selftest_options();
frontend::OptionTable bench_ops_options();
std::vector<OptionSection> generate_sections();
std::vector<OptionSection> bench_sections();
frontend::OptionTable methods_options();
frontend::OptionTable families_options();
frontend::OptionTable bench_synthetic_options();
frontend::OptionTable bench_text_encoder_options();

}  // namespace vkspec::cli
