#include "eval/sample_completeness.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "common/error.h"

namespace vkspec {
namespace {

struct RunSeeds {
  uint64_t first = 0;
  int64_t images = 0;
  int64_t shards = 1;
};

// "FIRST+IMAGES [shards N]".
RunSeeds parse_run_seeds(const std::string& text, const std::string& where) {
  RunSeeds r;
  std::istringstream in(text);
  std::string range, word, shards;
  in >> range >> word >> shards;
  const size_t plus = range.find('+');
  try {
    if (plus == std::string::npos) throw Error("no '+'");
    size_t used = 0;
    r.first = std::stoull(range.substr(0, plus), &used);
    if (used != plus) throw Error("bad first seed");
    r.images = std::stoll(range.substr(plus + 1), &used);
    if (used != range.size() - plus - 1 || r.images < 1) throw Error("bad image count");
    if (!word.empty()) {
      if (word != "shards") throw Error("expected 'shards'");
      r.shards = std::stoll(shards, &used);
      if (used != shards.size() || r.shards < 1 || r.shards > kMaxShards || r.shards > r.images)
        throw Error("bad shard count");
    }
  } catch (const std::exception& e) {
    throw Error("samples: " + where + ": run_seeds '" + text + "' is not FIRST+IMAGES [shards N] (" + e.what() + ")");
  }
  return r;
}

// Who makes image `seed` of `run`: the shard, or the unsharded command.
std::string maker(const RunSeeds& run, uint64_t seed) {
  if (run.shards > 1)
    return "shard " +
           Shard{shard_of_image(static_cast<int64_t>(seed - run.first), run.images, run.shards), run.shards}.str();
  return "--seed " + std::to_string(run.first) + " --images " + std::to_string(run.images);
}

}  // namespace

std::string run_seeds_text(uint64_t first, int64_t images, int64_t shards) {
  return std::to_string(first) + "+" + std::to_string(images) + (shards > 1 ? " shards " + std::to_string(shards) : "");
}

Completeness completeness(const SampleSet& merged) {
  Completeness c;
  auto it = merged.meta.find("run_seeds");
  if (it == merged.meta.end() || it->second.empty()) return c;
  const std::string where = merged.meta.count("method") ? merged.meta.at("method") : "(unnamed run)";
  std::vector<uint64_t> have;
  for (const ImageRecord& im : merged.images) have.push_back(im.seed);
  std::sort(have.begin(), have.end());
  // Merged files may name one run several times (its shards) or several runs (other seed ranges).
  std::map<uint64_t, std::string> missing;  // seed -> who makes it
  std::map<uint64_t, uint64_t> expected;    // disjoint [first, end) ranges, to count expected seeds once
  std::stringstream values(it->second);
  for (std::string v; std::getline(values, v, ';');) {
    v.erase(0, v.find_first_not_of(' '));
    if (v.empty()) continue;
    const RunSeeds run = parse_run_seeds(v, where);
    const uint64_t end = run.first + static_cast<uint64_t>(run.images);
    expected[run.first] = std::max(expected[run.first], end);
    for (uint64_t s = run.first; s < end; ++s)
      if (!std::binary_search(have.begin(), have.end(), s) && !missing.count(s)) missing[s] = maker(run, s);
  }
  uint64_t covered_to = 0;
  for (const auto& [first, end] : expected) {
    const uint64_t from = std::max(first, covered_to);
    if (end > from) c.expected += static_cast<int64_t>(end - from);
    covered_to = std::max(covered_to, end);
  }
  c.missing = static_cast<int64_t>(missing.size());
  // Consecutive missing seeds of one maker as one range: "50-99 (shard 1/3)".
  const int kShownRanges = 8;
  int ranges = 0;
  for (auto m = missing.begin(); m != missing.end();) {
    auto last = m;
    for (auto next = std::next(m); next != missing.end() && next->first == last->first + 1 && next->second == m->second;
         ++next)
      last = next;
    if (ranges < kShownRanges)
      c.missing_seeds += (ranges ? ", " : "") + std::to_string(m->first) +
                         (last->first != m->first ? "-" + std::to_string(last->first) : "") + " (" + m->second + ")";
    if (std::find(c.rerun.begin(), c.rerun.end(), m->second) == c.rerun.end()) c.rerun.push_back(m->second);
    ++ranges;
    m = std::next(last);
  }
  if (ranges > kShownRanges) c.missing_seeds += " and " + std::to_string(ranges - kShownRanges) + " more ranges";
  return c;
}

}  // namespace vkspec
