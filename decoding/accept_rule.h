#pragma once
// How a draft is judged: acceptance rules as a registry, the way strategies are. A rule is one
// file that registers an AcceptRuleDescriptor (its --accept name, whether it is lossless, its
// options as data, the models it needs, and a factory binding it to one strategy's sizes); the
// methods that take a rule declare where it is chosen (StrategyDescriptor::accept_rules) and the
// strategy registry adds the choice and every rule's options to them when it is first read. So a
// new rule reaches sjd, scd-mc, scd-gs, sd, zipar --verify and lantern's drafters without touching
// them.
//
// Every rule judges rows j = 0..n-1, each a draft x_j (kNoToken: none) drawn from q_j, against the
// target p_j, and resolves each row to a token: x_j when accepted, else a sample from a residual.
// Random numbers: (seed, positions[j], Accept, round) for the test, (seed, positions[j], Residual,
// round) for the residual, so rules are compared on equal numbers.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "decoding/option_spec.h"
#include "engine/ops/speculative.h"
#include "engine/vk/command_stream.h"

namespace vkspec {

struct ModelSet;
struct StrategyNeeds;
class AcceptRule;

// The rows one verification judges (rows [0, n) of each, n = drafts.numel()).
struct JudgedRows {
  TensorView p, q;       // f32 [n, V]: target and draft distributions
  TensorView drafts;     // u32 [n]
  TensorView positions;  // u32 [n]: each row's image position (its Philox key)
  uint64_t seed = 0;
  uint32_t round = 0;
  // Rows of several images (batched decoding): each row's own seed and round, added to `round`.
  ops::RowKeys keys;
};

struct AcceptRuleDescriptor {
  std::string name;       // what --accept (zipar: --verify) takes
  int order = 100;        // listing order among the choices
  std::string summary;    // one line for --help and the docs
  std::string reference;  // the paper, or "ours" with how it differs
  bool lossless = false;  // whether `accept ~ q, else resample` stays an exact sample of p
  // The rule is an exact test against a relaxed target p' (LANTERN): multi-draft tree tests
  // (eagle's trees) can run it by testing exactly against p'. Rules without it judge rows only.
  bool relaxes_target = false;
  std::vector<OptionSpec> options;  // the rule's own options (names unique over every rule)
  std::function<void(const OptionValues&, StrategyNeeds&)> needs;  // empty: the target alone
  // Binds the rule to a strategy judging at most max_rows rows of `vocab` tokens per call; throws
  // Error naming `method` when a model the rule needs is missing.
  std::function<std::unique_ptr<AcceptRule>(const OptionValues&, const ModelSet&, const std::string& method,
                                            int64_t max_rows)>
      bind;
};

// Where a method takes its rule (StrategyDescriptor::accept_rules): the option naming it, with
// the rule names as choices (after `extra_choices`, which are not rules: zipar's "none"), and
// the default. An empty `option` fixes the rule to `fallback` (lantern): only its options appear.
struct AcceptRuleSlot {
  std::string option = "accept";
  std::string fallback = "exact";
  std::vector<std::string> extra_choices;
  std::string help = "how drafts are judged (decoding/accept_rule.h; docs/methods.md, \"Acceptance rules\")";
};

// The rules in listing order; the one named (throws Error naming the known rules otherwise).
const std::vector<const AcceptRuleDescriptor*>& accept_rule_registry();
const AcceptRuleDescriptor& find_accept_rule(const std::string& name);

struct RegisterAcceptRule {
  explicit RegisterAcceptRule(AcceptRuleDescriptor d);
};

// The options a slot adds to its method: the choice (unless fixed), then every rule's options
// (a fixed slot: its rule's only).
std::vector<OptionSpec> accept_slot_options(const AcceptRuleSlot& slot);
// The rule a run's options choose through `slot` (nullptr for an extra choice such as "none");
// throws Error naming the method when an option of another rule is given.
const AcceptRuleDescriptor* chosen_accept_rule(const OptionValues& o, const AcceptRuleSlot& slot);

// A rule as chosen by one run's options: copyable, bound by each strategy (bind_accept_rule).
struct AcceptChoice {
  const AcceptRuleDescriptor* rule = nullptr;  // nullptr: exact
  std::shared_ptr<const OptionValues> options;
  const AcceptRuleDescriptor& descriptor() const;
  bool exact() const { return descriptor().name == "exact"; }
};
// The choice `slot` reads from o (the slot must name a rule: "none" throws naming the method).
AcceptChoice parse_accept_choice(const OptionValues& o, const AcceptRuleSlot& slot = {});
std::unique_ptr<AcceptRule> bind_accept_rule(const AcceptChoice& c, const ModelSet& models, const std::string& method,
                                             int64_t max_rows);

// A rule bound to one strategy (its scratch tensors sized for max_rows rows).
class AcceptRule {
 public:
  explicit AcceptRule(const AcceptRuleDescriptor& d) : descriptor_(d) {}
  virtual ~AcceptRule() = default;
  AcceptRule(const AcceptRule&) = delete;
  AcceptRule& operator=(const AcceptRule&) = delete;

  const AcceptRuleDescriptor& descriptor() const { return descriptor_; }
  bool exact() const { return descriptor_.name == "exact"; }
  // Records the test of every row (accept u32 [n]: 1 accepted) and its resolved token (u32 [n]).
  virtual void record_resolution(CommandStream& s, const JudgedRows& rows, const TensorView& accept,
                                 const TensorView& resolved) = 0;
  // Rules with relaxes_target: the distribution p' (rows like p, written to scratch unless it is p
  // itself) against which the exact test is this rule. Others throw.
  virtual TensorView record_target(CommandStream& s, const TensorView& p, const TensorView& drafts,
                                   const TensorView& scratch) const;
  // Rules with relaxes_target: what a rejected draft leaves, norm(max(from - minus, 0)), given the
  // rows' p, their record_target and draft distributions q (scratch rows like p for a rule that
  // writes one). The exact residual against the relaxed target, {target, q}, unless the rule
  // says otherwise (LANTERN++: {p, q without the draft's neighbours}).
  struct Rejection {
    TensorView from, minus;
  };
  virtual Rejection record_rejection(CommandStream& s, const TensorView& p, const TensorView& target,
                                     const TensorView& q, const TensorView& drafts, const TensorView& scratch) const;

 private:
  const AcceptRuleDescriptor& descriptor_;
};

// The exact test and residual of rows against `target` (p itself, or a relaxed p'): what every
// target-relaxing rule records, with the rows' own keys. skip_residual: Faults::skip_residual.
void record_exact_resolution(CommandStream& s, const JudgedRows& rows, const TensorView& target,
                             const TensorView& accept, const TensorView& resolved, bool skip_residual = false);

}  // namespace vkspec
