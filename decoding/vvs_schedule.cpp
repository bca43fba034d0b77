#include "decoding/vvs_schedule.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace vkspec {

bool vvs_uniform_skips(const VvsOptions& o, int64_t round, int64_t committed) {
  return committed >= kVvsFirstSkip && round >= 0 && round % o.interval == 1;
}

double vvs_path_similarity(const std::vector<std::vector<int32_t>>& paths, const std::vector<float>& codebook,
                           int64_t dim, double decay) {
  std::vector<std::vector<std::vector<double>>> unit;  // per kept path, per depth: the unit code vector
  size_t longest = 0;
  for (size_t r = 0; r < paths.size(); r += 2) {  // an empty path stays, similar to none
    std::vector<std::vector<double>> rows;
    for (int32_t token : paths[r]) {
      const size_t at = static_cast<size_t>(token) * static_cast<size_t>(dim);
      if (token < 0 || at + static_cast<size_t>(dim) > codebook.size())
        throw Error("vvs: draft token " + std::to_string(token) + " outside the codebook");
      std::vector<double> v(codebook.begin() + static_cast<std::ptrdiff_t>(at),
                            codebook.begin() + static_cast<std::ptrdiff_t>(at + static_cast<size_t>(dim)));
      double norm = 0;
      for (double x : v) norm += x * x;
      norm = std::max(std::sqrt(norm), 1e-12);  // F.normalize's eps
      for (double& x : v) x /= norm;
      rows.push_back(std::move(v));
    }
    longest = std::max(longest, rows.size());
    unit.push_back(std::move(rows));
  }
  if (unit.size() < 2) return 0.0;
  std::vector<double> weight(longest);
  double total = 0;
  for (size_t l = 0; l < longest; ++l) total += weight[l] = std::pow(decay, static_cast<double>(l));
  double sum = 0;
  int64_t pairs = 0;
  for (size_t a = 0; a < unit.size(); ++a)
    for (size_t b = a + 1; b < unit.size(); ++b, ++pairs)
      for (size_t l = 0; l < std::min(unit[a].size(), unit[b].size()); ++l) {
        double dot = 0;
        for (int64_t k = 0; k < dim; ++k)
          dot += unit[a][l][static_cast<size_t>(k)] * unit[b][l][static_cast<size_t>(k)];
        sum += weight[l] / total * dot;
      }
  return sum / static_cast<double>(pairs);
}

VvsSkip vvs_choose_skip(const std::vector<std::vector<int32_t>>& paths, float u) {
  if (paths.empty() || std::any_of(paths.begin(), paths.end(), [](const auto& p) { return p.empty(); }))
    throw Error("vvs: a skipped round needs draft paths of at least one draft");
  int64_t entries = 0;
  for (const auto& p : paths) entries += static_cast<int64_t>(p.size()) + 1;
  const int64_t count = static_cast<int64_t>(paths.size());
  VvsSkip s;
  s.path = std::min(static_cast<size_t>(static_cast<double>(u) * static_cast<double>(count)), paths.size() - 1);
  const int64_t mean_length = entries / count;  // the root counted, as the code's candidates matrix
  s.drafts = std::max<int64_t>(1, std::min<int64_t>(static_cast<int64_t>(paths[s.path].size()), mean_length - 1));
  return s;
}

}  // namespace vkspec
