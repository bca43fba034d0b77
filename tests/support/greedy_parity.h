#pragma once
// The parity tests' greedy check: the engine's greedy tokens against a PyTorch reference's greedy
// loop (its JSON: "tokens" and each step's top-2 "gaps"), equal up to the first divergence, which
// passes only at a near-tie (reported with its gap): from there the two condition on different
// tokens.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace vkspec::testing {

inline void expect_greedy_tokens_match(const std::string& label, const std::vector<int32_t>& got,
                                       const std::string& reference_json) {
  const nlohmann::json g = nlohmann::json::parse(std::ifstream(reference_json));
  const std::vector<int64_t> want = g.at("tokens").get<std::vector<int64_t>>();
  const std::vector<double> gaps = g.at("gaps").get<std::vector<double>>();
  ASSERT_EQ(got.size(), want.size()) << label;
  for (size_t i = 0; i < want.size(); ++i) {
    if (static_cast<int64_t>(got[i]) == want[i]) continue;
    std::cout << label << ": greedy tokens diverge at " << i << ", reference top-2 gap " << gaps[i] << "\n";
    EXPECT_LT(gaps[i], 1e-3) << label << ": a divergence that is not a near-tie at token " << i;
    return;
  }
}

}  // namespace vkspec::testing
