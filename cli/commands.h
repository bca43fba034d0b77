#pragma once
// One function per `vkspec` subcommand; each returns the process exit code.
#include <string>
#include <vector>

namespace vkspec::cli {

using Args = std::vector<std::string>;

int cmd_devices(const Args& args);
int cmd_selftest(const Args& args);
int cmd_bench_ops(const Args& args);
int cmd_generate(const Args& args);
int cmd_bench(const Args& args);
// `methods [--markdown]`: the registered decoding methods and their options.
int cmd_methods(const Args& args);
// The usage lines naming every registered method.
std::string methods_usage();
// `bench --synthetic SHAPE`: forward timings of a generated LlamaGen-shaped model (cmd_bench hands over).
int cmd_bench_synthetic(const Args& args);

}  // namespace vkspec::cli
