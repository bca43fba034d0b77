// `vkspec methods [--markdown]`: every registered decoding method with its summary, reference,
// losslessness and options, from the strategy registry. --markdown prints the option tables
// docs/methods.md carries (CTest docs.method_options checks that they agree). Both end with the
// acceptance rules (decoding/accept_rule.h) that the methods with --accept / --verify take.
#include <cstdio>
#include <string>

#include "frontend/arg_parser.h"
#include "cli/commands.h"
#include "decoding/strategy.h"

namespace vkspec::cli {
namespace {

// A cell of a markdown table: pipes would end the cell.
std::string cell(std::string s) {
  for (size_t i = 0; (i = s.find('|', i)) != std::string::npos; i += 2) s.replace(i, 1, "\\|");
  return s;
}

void print_markdown() {
  for (const StrategyDescriptor* d : strategy_registry()) {
    std::printf("#### `%s` options (%s)\n", d->name.c_str(), d->losslessness().c_str());
    if (d->options.empty()) {
      std::printf("No options.\n\n");
      continue;
    }
    std::printf("| option | accepts | default | what it does |\n|---|---|---|---|\n");
    for (const OptionSpec& o : d->options)
      std::printf("| `--%s` | %s | %s | %s |\n", o.name.c_str(), cell(o.accepted()).c_str(), o.fallback.c_str(),
                  cell(o.help).c_str());
    std::printf("\n");
  }
  std::printf("#### Acceptance rules (`--accept`, zipar's `--verify`)\n\n");
  std::printf("| rule | lossless | what it does | reference |\n|---|---|---|---|\n");
  for (const AcceptRuleDescriptor* r : accept_rule_registry())
    std::printf("| `%s` | %s | %s | %s |\n", r->name.c_str(), r->lossless ? "yes" : "no", cell(r->summary).c_str(),
                cell(r->reference).c_str());
  std::printf("\n");
}

void print_text() {
  for (const StrategyDescriptor* d : strategy_registry()) {
    std::printf("%s  (%s)\n  %s\n  reference: %s\n", d->name.c_str(), d->losslessness().c_str(), d->summary.c_str(),
                d->reference.c_str());
    for (const OptionSpec& o : d->options)
      std::printf("    --%-9s %s (default %s): %s\n", o.name.c_str(), o.accepted().c_str(), o.fallback.c_str(),
                  o.help.c_str());
    std::printf("\n");
  }
  std::printf("acceptance rules (--accept, zipar's --verify):\n");
  for (const AcceptRuleDescriptor* r : accept_rule_registry())
    std::printf("  %-8s (%s) %s\n           reference: %s\n", r->name.c_str(), r->lossless ? "lossless" : "lossy",
                r->summary.c_str(), r->reference.c_str());
}

}  // namespace

std::string methods_usage() {
  std::string names;
  for (const StrategyDescriptor* d : strategy_registry()) names += (names.empty() ? "" : ", ") + d->name;
  return "  methods: " + names + "\n  (`vkspec methods` lists each with its options; docs/methods.md describes them)\n";
}

frontend::OptionTable methods_options() {
  return {{"--markdown", "", "print the option tables docs/methods.md carries"}};
}

int cmd_methods(const Args& args) {
  frontend::ArgParser ap("methods", methods_options());
  ap.parse(args);
  if (ap.flag("--markdown"))
    print_markdown();
  else
    print_text();
  return 0;
}

}  // namespace vkspec::cli
