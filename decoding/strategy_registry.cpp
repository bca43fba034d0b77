#include "decoding/strategy_registry.h"

#include <algorithm>
#include <cstdio>
#include <deque>

#include "common/error.h"

namespace vkspec {
namespace {

// Function-local so registration from other files' static initialisers finds it constructed.
std::deque<StrategyDescriptor>& descriptors() {
  static std::deque<StrategyDescriptor> d;  // stable addresses for the sorted list
  return d;
}

// The rule a lenient reading of the options chooses; nullptr for an extra choice ("none") or for
// options of another rule given (make() reports those).
const AcceptRuleDescriptor* chosen_rule_or_null(const OptionValues& o, const AcceptRuleSlot& slot) {
  try {
    return chosen_accept_rule(o, slot);
  } catch (const Error&) {
    return nullptr;
  }
}

}  // namespace

OptionValues StrategyDescriptor::values(const MethodOptions& given) const { return OptionValues(name, options, given); }

OptionValues StrategyDescriptor::lenient_values(const MethodOptions& given) const {
  return OptionValues(name, options, given, OptionValues::Leniency::DefaultsForBadValues);
}

StrategyNeeds StrategyDescriptor::needs_for(const MethodOptions& given) const {
  const OptionValues o = lenient_values(given);
  StrategyNeeds n = needs ? needs(o) : StrategyNeeds{};
  if (accept_rules) {
    const AcceptRuleDescriptor* rule = chosen_rule_or_null(o, *accept_rules);
    if (rule && rule->needs) rule->needs(o, n);
  }
  if (n.neighbours && o.declares("metric")) n.neighbour_metric = parse_neighbour_metric(o.choice("metric"));
  return n;
}

int64_t StrategyDescriptor::max_queries_for(const MethodOptions& given, const GptConfig& target,
                                            const GptConfig* low_res) const {
  if (low_res && max_queries_with_low_res) return max_queries_with_low_res(lenient_values(given), target, *low_res);
  return max_queries ? max_queries(lenient_values(given), target) : 1;
}

int64_t StrategyDescriptor::fixed_queries_for(const MethodOptions& given) const {
  return fixed_queries ? fixed_queries(lenient_values(given)) : 0;
}

int64_t StrategyDescriptor::jacobi_window_for(const MethodOptions& given) const {
  return jacobi_window ? jacobi_window(lenient_values(given)) : 0;
}

bool StrategyDescriptor::lossless_for(const MethodOptions& given) const {
  const OptionValues o = lenient_values(given);
  if (!lossless || !lossless(o)) return false;
  if (!accept_rules) return true;
  const AcceptRuleDescriptor* rule = chosen_rule_or_null(o, *accept_rules);
  return rule && rule->lossless;
}

std::string StrategyDescriptor::losslessness() const {
  if (lossless_for({})) return "lossless";
  for (const OptionSpec& o : options)
    for (const std::string& c : o.choices)
      if (lossless_for({{o.name, c}})) return "lossy by default, lossless with --" + o.name + " " + c;
  return "lossy";
}

bool StrategyDescriptor::has_option(const std::string& key) const {
  return std::any_of(options.begin(), options.end(), [&](const OptionSpec& o) { return o.name == key; });
}

RegisterStrategy::RegisterStrategy(StrategyDescriptor d) {
  if (d.name.empty() || !d.make) {
    // A static initialiser must not throw: report and leave the method out.
    std::fprintf(stderr, "vkspec: strategy descriptor '%s' without a name or factory ignored\n", d.name.c_str());
    return;
  }
  descriptors().push_back(std::move(d));
}

const std::vector<const StrategyDescriptor*>& strategy_registry() {
  // Built on first use, after every static initialiser has run.
  static const std::vector<const StrategyDescriptor*> sorted = [] {
    std::vector<const StrategyDescriptor*> v;
    for (StrategyDescriptor& d : descriptors()) {
      // Every acceptance rule has registered by now (static initialisers of other files).
      if (d.accept_rules)
        for (OptionSpec& s : accept_slot_options(*d.accept_rules)) d.options.push_back(std::move(s));
      v.push_back(&d);
    }
    std::stable_sort(v.begin(), v.end(), [](const StrategyDescriptor* a, const StrategyDescriptor* b) {
      return a->order != b->order ? a->order < b->order : a->name < b->name;
    });
    return v;
  }();
  return sorted;
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const StrategyDescriptor* d : strategy_registry()) names.push_back(d->name);
  return names;
}

const StrategyDescriptor& find_strategy(const std::string& name) {
  std::string known;
  for (const StrategyDescriptor* d : strategy_registry()) {
    if (d->name == name) return *d;
    known += (known.empty() ? "" : ", ") + d->name;
  }
  throw Error("unknown method '" + name + "' (known: " + known + ")");
}

const std::string& reference_method_name() {
  for (const StrategyDescriptor* d : strategy_registry())
    if (d->reference_method) return d->name;
  throw Error("no reference method registered (ar)");
}

std::string batch_method_names() {
  std::string names;
  for (const StrategyDescriptor* d : strategy_registry())
    if (d->make_batch) names += (names.empty() ? "" : ", ") + d->name;
  return names.empty() ? "none" : names;
}

}  // namespace vkspec
