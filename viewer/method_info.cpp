#include "viewer/method_info.h"

#include <map>

namespace vkspec::viewer {

std::string method_summary(const std::string& method) {
  static const std::map<std::string, std::string> kSummaries = {
      {"ar", "one token per forward pass, left to right: the reference every method is compared with"},
      {"sjd", "Speculative Jacobi Decoding: guesses a window of tokens, keeps them up to the first the model rejects"},
      {"scd-mc", "Speculative Coupled Decoding: verifies the whole window and couples each rejected guess to its "
                 "resample, so guesses settle faster"},
      {"scd-gs", "Speculative Coupled Decoding with shared Gumbel noise: successive guesses reuse the same noise"},
      {"sd", "draft-model speculative decoding: a small model drafts, the large one verifies in one pass"},
      {"lantern", "LANTERN: relaxed acceptance, a guess close enough in the codebook counts as right"},
      {"zipar", "ZipAR: several rows decode in parallel once the row above is far enough ahead"},
      {"hawk", "Hawk: horizontal and vertical draft heads propose a tree of candidates, verified at once"},
      {"ssd", "spatial block drafting: drafts blocks of rows and corrects rejected tokens in place"},
      {"mulo", "MuLo-SD: a low-resolution model drafts, rejected tokens grow into islands resampled together"},
  };
  auto it = kSummaries.find(method);
  if (it != kSummaries.end()) return it->second;
  return "decoding method '" + method + "'";
}

}  // namespace vkspec::viewer
