#include "decoding/pjd_schedule.h"

#include <algorithm>

#include "common/error.h"

namespace vkspec {

PjdSchedule::PjdSchedule(int64_t width, int64_t window, int64_t lag, int64_t lead)
    : W_(width), window_(window), lag_(lag), lead_(lead) {
  if (width < 1 || window < 1 || lag < 1 || lag > width || lead < 1 || lead > width)
    throw Error("pjd: schedule needs width >= 1, window >= 1 and lag and lead in [1, width] (width " +
                std::to_string(width) + ", window " + std::to_string(window) + ", lag " + std::to_string(lag) +
                ", lead " + std::to_string(lead) + ")");
  committed_.assign(static_cast<size_t>(W_), 0);
  started_.assign(static_cast<size_t>(W_), false);
  started_[0] = true;
}

std::vector<PjdWindow> PjdSchedule::windows() const {
  std::vector<PjdWindow> out;
  bool top = true;
  for (int64_t r = 0; r < W_; ++r) {
    if (!started(r) || complete(r)) continue;
    const int64_t c = committed(r);
    const int64_t room = top ? W_ - c : committed(r - 1) - (lead_ - 1) - c;
    const int64_t q = std::min(room, window_);
    if (q > 0) out.push_back({r, c, q, top});
    top = false;
  }
  return out;
}

void PjdSchedule::commit(int64_t row, int64_t tokens) {
  int64_t& c = committed_[static_cast<size_t>(row)];
  if (tokens < 0 || c + tokens > W_) throw Error("pjd: row " + std::to_string(row) + " committed past its end");
  c += tokens;
}

void PjdSchedule::activate_rows() {
  for (int64_t r = 0; r + 1 < W_; ++r)
    if (started(r) && committed(r) >= lag_) started_[static_cast<size_t>(r + 1)] = true;
}

bool PjdSchedule::done() const {
  return std::all_of(committed_.begin(), committed_.end(), [&](int64_t c) { return c == W_; });
}

PjdVisibility::PjdVisibility(PjdMask mask, std::vector<bool> valid)
    : mask_(mask), valid_(std::move(valid)), draft_window_(valid_.size(), -2) {}

void PjdVisibility::add(int64_t slot, int64_t window, PjdFeed feed) {
  const size_t s = static_cast<size_t>(slot);
  valid_[s] = feed == PjdFeed::Committed;
  draft_window_[s] = feed == PjdFeed::Draft ? window : -2;
  window_of_.push_back(window);
}

bool PjdVisibility::sees(int64_t i, int64_t s) const {
  const size_t slot = static_cast<size_t>(s);
  if (valid_[slot]) return true;
  const int64_t w = draft_window_[slot];
  if (w == -2) return false;
  return mask_ == PjdMask::Full || w == window_of_[static_cast<size_t>(i)];
}

}  // namespace vkspec
