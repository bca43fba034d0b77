// vkspec: autoregressive image generation with speculative decoding on any Vulkan device.
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <string>

#include "cli/commands.h"
#include "common/env.h"

namespace {

const char* kUsage =
    "usage: vkspec <command> [options]\n"
    "\n"
    "commands:\n"
    "  generate [--model FILE] [--vq FILE] [--class N] [--seed S] [--images N] [--cfg S]\n"
    "           [--temperature T] [--top-k K] [--top-p P] [--method M] [method options]\n"
    "           [--drafter jacobi|model|FILE] [--out out.png] [--trace trace.json] [--scale F] [--columns C]\n"
    "           [--caption-embeddings FILE]  (a text-to-image model's condition instead of --class)\n"
    "                                 generate images (a grid for several) with the shipped model\n"
    "  bench [--methods ar,sjd,...] [--images N] [method options] [--sweep KEY=V1,V2,...]\n"
    "        [--warmup N] [--json FILE] [--model/--vq/--drafter FILE] [--classifier FILE|none] [--profile]\n"
    "        [--seed S] [--samples DIR]\n"
    "                                 compare methods on the same classes and seeds (--profile: GPU\n"
    "                                 timestamps per forward; --samples: keep every image's record in\n"
    "                                 DIR and resume from it, so long evaluations can be split)\n"
    "  bench --report DIR|FILE[,...] [--json FILE]\n"
    "                                 one table from the sample files of several bench commands\n"
    "  bench --synthetic B|L|XL [--grid 16|24] [--windows 1,4,16,32,64] [--repeat N] [--json FILE]\n"
    "        [--nfe FILE,...|none] [--seed S]\n"
    "                                 time AR steps and verification windows of a LlamaGen-shaped\n"
    "                                 model with generated weights; images/s per method projected\n"
    "  methods [--markdown]           every decoding method with its options (from the registry)\n"
    "  devices [--json]               list Vulkan devices and their capabilities\n"
    "  selftest [--device N|all] [--op NAME]\n"
    "                                 run every GPU op against the CPU reference\n"
    "  bench-ops [--json FILE] [--op NAME] [--repeat N]\n"
    "                                 time each op (GPU timestamps) next to the CPU reference\n"
    "\n"
    "environment:\n";

std::string usage() {
  std::string u = kUsage;
  const std::string marker = "  devices [--json]";
  u.insert(u.find(marker), "\n" + vkspec::cli::methods_usage() + "  Models: --drafter, --low-res, --heads FILE.\n\n");
  // The variables' own table (common/env.h), as README.md shows it.
  for (const vkspec::env::Variable* v : vkspec::env::variables())
    u += std::string("  ") + v->setting + "\n      " + v->effect + "\n";
  return u;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace vkspec::cli;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(usage().c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::map<std::string, int (*)(const Args&)> commands = {
      {"devices", cmd_devices},   {"selftest", cmd_selftest}, {"bench-ops", cmd_bench_ops},
      {"generate", cmd_generate}, {"bench", cmd_bench},       {"methods", cmd_methods}};
  auto it = commands.find(argv[1]);
  if (it == commands.end()) {
    std::cerr << "vkspec: unknown command '" << argv[1] << "'\n\n" << usage();
    return 2;
  }
  try {
    return it->second(Args(argv + 2, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "vkspec " << argv[1] << ": error: " << e.what() << "\n";
    return 1;
  }
}
