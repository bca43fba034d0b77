#pragma once
// Method options on the command line, routed generically: every option some registered strategy
// declares (StrategyDescriptor::options) is accepted as --name VALUE by generate and bench and
// handed to the methods that know it; each method's specs check the values.
#include <string>
#include <vector>

#include "decoding/strategy.h"
#include "frontend/arg_parser.h"

namespace vkspec::cli {

// "--window", "--init", ...: the union over the registry, each with the methods that know it.
frontend::OptionTable method_option_table();
std::vector<std::string> method_option_flags();
// The method options given on the command line (keys without "--"); --drafter FILE reads as
// drafter=model (the file itself is the front end's business: frontend/model_catalog.h).
MethodOptions given_method_options(const frontend::ArgParser& ap);
// The subset of `given` that `method` knows.
MethodOptions options_for(const std::string& method, const MethodOptions& given);
// Throws when a given option is known by none of `methods` (a typo or a misplaced option).
void check_used(const MethodOptions& given, const std::vector<std::string>& methods);

}  // namespace vkspec::cli
