#include "decoding/iteration_stats.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "common/error.h"

namespace vkspec {
namespace {

template <size_t N>
int64_t sum(const std::array<int64_t, N>& a, int k) {
  if (k >= 0) return a[static_cast<size_t>(k)];
  int64_t s = 0;
  for (int64_t v : a) s += v;
  return s;
}

double share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : -1.0;
}

}  // namespace

void IterationStats::add(const IterationStats& o) {
  for (size_t k = 0; k < kVisits; ++k) {
    drafts[k] += o.drafts[k];
    decided[k] += o.decided[k];
    accepted[k] += o.accepted[k];
    transitions[k] += o.transitions[k];
    collisions[k] += o.collisions[k];
  }
  images += o.images;
}

double IterationStats::collision_rate(int k) const { return share(sum(collisions, k), sum(transitions, k)); }
double IterationStats::acceptance_rate(int k) const { return share(sum(accepted, k), sum(decided, k)); }

IterationStats jacobi_iteration_stats(const std::vector<StepEvent>& events, int64_t window, int64_t image_tokens) {
  if (window < 1 || image_tokens < 1)
    throw Error("iteration statistics: window " + std::to_string(window) + " and image of " +
                std::to_string(image_tokens) + " tokens must be positive");
  IterationStats s;
  s.images = 1;
  std::vector<int64_t> visits(static_cast<size_t>(image_tokens), 0);
  std::vector<int32_t> last_draft(static_cast<size_t>(image_tokens), -1);
  for (const StepEvent& e : events) {
    if (e.proposed.empty()) continue;
    if (e.proposed.size() != e.proposed_tokens.size())
      throw Error("iteration statistics: step " + std::to_string(e.step) + " lists " +
                  std::to_string(e.proposed.size()) + " rows but " + std::to_string(e.proposed_tokens.size()) +
                  " tokens");
    const int64_t c = e.proposed[0];
    for (size_t t = 0; t < e.proposed.size(); ++t)
      if (e.proposed[t] != c + static_cast<int64_t>(t) || e.proposed[t] >= image_tokens)
        throw Error("iteration statistics: step " + std::to_string(e.step) +
                    " does not verify a contiguous window of the image (not a Jacobi window method)");
    const int64_t drafts = std::min<int64_t>({window, image_tokens - c, static_cast<int64_t>(e.proposed.size())});
    const std::unordered_set<int32_t> accepted(e.accepted.begin(), e.accepted.end());
    const std::unordered_set<int32_t> rejected(e.rejected.begin(), e.rejected.end());
    for (int64_t t = 0; t < drafts; ++t) {
      const size_t n = static_cast<size_t>(c + t);
      const int32_t token = e.proposed_tokens[static_cast<size_t>(t)];
      if (visits[n] > 0) {  // this visit follows visit visits[n]
        const size_t prev = static_cast<size_t>(std::min<int64_t>(visits[n], IterationStats::kVisits) - 1);
        ++s.transitions[prev];
        if (token == last_draft[n]) ++s.collisions[prev];
      }
      ++visits[n];
      const size_t k = static_cast<size_t>(std::min<int64_t>(visits[n], IterationStats::kVisits) - 1);
      ++s.drafts[k];
      const bool acc = accepted.count(static_cast<int32_t>(n)) > 0, rej = rejected.count(static_cast<int32_t>(n)) > 0;
      if (acc || rej) ++s.decided[k];
      if (acc) ++s.accepted[k];
      last_draft[n] = token;
    }
  }
  return s;
}

}  // namespace vkspec
