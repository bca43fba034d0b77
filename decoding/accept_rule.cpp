#include "decoding/accept_rule.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <set>

#include "common/error.h"
#include "engine/ops/philox.h"
#include "engine/ops/speculative.h"

namespace vkspec {
namespace {

// Function-local so registration from other files' static initialisers finds it constructed.
std::deque<AcceptRuleDescriptor>& descriptors() {
  static std::deque<AcceptRuleDescriptor> d;
  return d;
}

std::string rule_names() {
  std::string s;
  for (const AcceptRuleDescriptor* d : accept_rule_registry()) s += (s.empty() ? "" : ", ") + d->name;
  return s;
}

// The rule whose option `key` is, or nullptr.
const AcceptRuleDescriptor* owner_of(const std::string& key) {
  for (const AcceptRuleDescriptor* d : accept_rule_registry())
    for (const OptionSpec& s : d->options)
      if (s.name == key) return d;
  return nullptr;
}

}  // namespace

RegisterAcceptRule::RegisterAcceptRule(AcceptRuleDescriptor d) {
  if (d.name.empty() || !d.bind) {
    // A static initialiser must not throw: report and leave the rule out.
    std::fprintf(stderr, "vkspec: acceptance rule '%s' without a name or factory ignored\n", d.name.c_str());
    return;
  }
  descriptors().push_back(std::move(d));
}

const std::vector<const AcceptRuleDescriptor*>& accept_rule_registry() {
  // Built on first use, after every static initialiser has run.
  static const std::vector<const AcceptRuleDescriptor*> sorted = [] {
    std::vector<const AcceptRuleDescriptor*> v;
    std::set<std::string> option_names;
    for (const AcceptRuleDescriptor& d : descriptors()) {
      for (const OptionSpec& s : d.options)
        if (!option_names.insert(s.name).second)
          std::fprintf(stderr, "vkspec: acceptance rule '%s' repeats option --%s\n", d.name.c_str(), s.name.c_str());
      v.push_back(&d);
    }
    std::stable_sort(v.begin(), v.end(), [](const AcceptRuleDescriptor* a, const AcceptRuleDescriptor* b) {
      return a->order != b->order ? a->order < b->order : a->name < b->name;
    });
    return v;
  }();
  return sorted;
}

const AcceptRuleDescriptor& find_accept_rule(const std::string& name) {
  for (const AcceptRuleDescriptor* d : accept_rule_registry())
    if (d->name == name) return *d;
  throw Error("unknown acceptance rule '" + name + "' (known: " + rule_names() + ")");
}

std::vector<OptionSpec> accept_slot_options(const AcceptRuleSlot& slot) {
  std::vector<OptionSpec> specs;
  if (!slot.option.empty()) {
    std::vector<std::string> choices = slot.extra_choices;
    std::string help = slot.help + ":";
    for (const AcceptRuleDescriptor* d : accept_rule_registry()) {
      choices.push_back(d->name);
      help += " " + d->name + (d->lossless ? " (lossless)" : " (lossy)") + ",";
    }
    help.pop_back();
    specs.push_back(OptionSpec::choice(slot.option, slot.fallback, choices, help));
  }
  for (const AcceptRuleDescriptor* d : accept_rule_registry()) {
    if (slot.option.empty() && d->name != slot.fallback) continue;
    for (OptionSpec s : d->options) {
      if (!slot.option.empty()) s.help = d->name + ": " + s.help;
      specs.push_back(std::move(s));
    }
  }
  return specs;
}

const AcceptRuleDescriptor* chosen_accept_rule(const OptionValues& o, const AcceptRuleSlot& slot) {
  const std::string& name = slot.option.empty() ? slot.fallback : o.choice(slot.option);
  const bool extra = std::find(slot.extra_choices.begin(), slot.extra_choices.end(), name) != slot.extra_choices.end();
  const AcceptRuleDescriptor* chosen = extra ? nullptr : &find_accept_rule(name);
  for (const auto& [key, value] : o.given_options()) {
    const AcceptRuleDescriptor* owner = owner_of(key);
    if (owner && owner != chosen)
      throw Error(o.method() + ": --" + key + " belongs to --" + (slot.option.empty() ? "accept" : slot.option) + " " +
                  owner->name);
  }
  return chosen;
}

const AcceptRuleDescriptor& AcceptChoice::descriptor() const { return rule ? *rule : find_accept_rule("exact"); }

AcceptChoice parse_accept_choice(const OptionValues& o, const AcceptRuleSlot& slot) {
  AcceptChoice c;
  c.rule = chosen_accept_rule(o, slot);
  if (!c.rule)
    throw Error(o.method() + ": --" + slot.option + " " + o.choice(slot.option) + " names no acceptance rule");
  c.options = std::make_shared<const OptionValues>(o);
  return c;
}

std::unique_ptr<AcceptRule> bind_accept_rule(const AcceptChoice& c, const ModelSet& models, const std::string& method,
                                             int64_t max_rows) {
  const AcceptRuleDescriptor& d = c.descriptor();
  // The exact rule reads no options: a default choice has none to give.
  static const OptionValues kNone("exact", {}, {});
  return d.bind(c.options ? *c.options : kNone, models, method, max_rows);
}

TensorView AcceptRule::record_target(CommandStream&, const TensorView&, const TensorView&, const TensorView&) const {
  throw Error("acceptance rule " + descriptor_.name + " judges rows only: it has no relaxed target for tree tests");
}

AcceptRule::Rejection AcceptRule::record_rejection(CommandStream&, const TensorView&, const TensorView& target,
                                                   const TensorView& q, const TensorView&, const TensorView&) const {
  return {target, q};
}

void record_exact_resolution(CommandStream& s, const JudgedRows& rows, const TensorView& target,
                             const TensorView& accept, const TensorView& resolved, bool skip_residual) {
  using philox::Purpose;
  ops::spec_accept(s, target, rows.q, rows.drafts, rows.positions,
                   {rows.seed, philox::purpose_word(Purpose::Accept, rows.round), rows.keys}, accept);
  // With q = target the residual is all zero and spec_residual_sample draws from target itself.
  ops::spec_residual_sample(s, target, skip_residual ? target : rows.q, rows.positions,
                            {rows.seed, philox::purpose_word(Purpose::Residual, rows.round), rows.keys}, resolved,
                            accept, rows.drafts);
}

}  // namespace vkspec
