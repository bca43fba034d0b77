// Fuzz target: command-line options as `vkspec generate` and `bench` see them. The input is split
// at newlines into arguments; they go through the argument parser with the commands' flags, the
// method-option routing (which method knows which option) and every method's own range checks.
#include <string>
#include <vector>

#include "cli/method_options.h"
#include "common/error.h"
#include "decoding/strategy.h"
#include "frontend/arg_parser.h"
#include "fuzz/fuzz_target.h"

namespace {

void check_method(const std::string& method, const vkspec::MethodOptions& o) {
  using namespace vkspec;
  // The checks each strategy runs on its options before it touches a model: the registry's specs,
  // strictly, then leniently as the front ends size models.
  const StrategyDescriptor& d = find_strategy(method);
  GptConfig cfg;
  cfg.grid_size = 16;
  (void)d.max_queries_for(o, cfg);
  (void)d.needs_for(o);
  (void)d.fixed_queries_for(o);
  (void)d.values(o);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace vkspec;
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.emplace_back();
    } else {
      args.back() += static_cast<char>(data[i]);
    }
  }
  try {
    std::set<std::string> known = {"--method",      "--methods", "--images", "--seed",  "--class",  "--cfg",
                                   "--temperature", "--top-k",   "--top-p",  "--sweep", "--drafter"};
    for (const std::string& f : cli::method_option_flags()) known.insert(f);
    frontend::ArgParser ap("fuzz", {"--json"}, known);
    ap.parse(args);
    (void)ap.get_int("--images", 1, 1, 10000);
    (void)ap.get_int("--seed", 0, 0, (1ll << 62));
    (void)ap.get_int("--class", 0, 0, 9);
    (void)ap.get_double("--cfg", 4, 0, 100);
    (void)ap.get_double("--temperature", 1, 1e-6, 100);
    (void)ap.get_int("--top-k", 0, 0, 1 << 24);
    (void)ap.get_double("--top-p", 1, 1e-6, 1);
    const MethodOptions given = cli::given_method_options(ap);
    const std::string method = ap.get_or("--method", "ar");
    cli::check_used(given, {method});
    check_method(method, cli::options_for(method, given));
  } catch (const Error&) {
  }
  return 0;
}
