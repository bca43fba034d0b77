#include "decoding/zipar_rows.h"

#include <algorithm>

#include "decoding/step_event.h"

namespace vkspec {

uint32_t row_start_token(const std::vector<int32_t>& grid, int64_t W, int64_t r, int64_t above) {
  auto at = [&](int64_t row, int64_t col) { return grid[static_cast<size_t>(row * W + col)]; };
  if (above == W) return static_cast<uint32_t>(at(r - 1, W - 1));
  if (r >= 2 && at(r - 2, W - 1) != kUndecided) return static_cast<uint32_t>(at(r - 2, W - 1));
  return static_cast<uint32_t>(at(r - 1, above - 1));
}

ZipArRows::ZipArRows(int64_t W, int64_t window, int64_t cls_token_num, int64_t cache_slots)
    : W_(W),
      window_(window),
      cls_(cls_token_num),
      next_col_(static_cast<size_t>(W), 0),
      placeholder_(static_cast<size_t>(W), false),
      slot_valid_(static_cast<size_t>(cache_slots), false) {
  std::fill(slot_valid_.begin(), slot_valid_.begin() + (cls_token_num - 1), true);  // prefilled (TargetSession)
}

std::vector<int64_t> ZipArRows::active_rows() const {
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < W_; ++r) {
    const int64_t c = next_col_[static_cast<size_t>(r)];
    if (c >= W_) continue;
    if (r > 0 && next_col_[static_cast<size_t>(r - 1)] < std::min(c + window_, W_)) continue;
    rows.push_back(r);
  }
  return rows;
}

std::vector<ZipArQuery> ZipArRows::plan(const std::vector<int32_t>& grid) {
  std::vector<ZipArQuery> queries;
  for (int64_t r : active_rows()) {
    const int64_t m = r * W_ + next_col_[static_cast<size_t>(r)];
    ZipArQuery q{cls_ + m - 1, 0, m, true};
    if (m > 0) {
      const bool row_start = next_col_[static_cast<size_t>(r)] == 0;
      q.fed = row_start ? row_start_token(grid, W_, r, next_col_[static_cast<size_t>(r - 1)])
                        : static_cast<uint32_t>(grid[static_cast<size_t>(m - 1)]);
      q.real_input = !row_start || next_col_[static_cast<size_t>(r - 1)] == W_;
      if (!q.real_input) placeholder_[static_cast<size_t>(r)] = true;
    }
    queries.push_back(q);
  }
  for (int64_t r = 1; r < W_; ++r)
    if (placeholder_[static_cast<size_t>(r)] && next_col_[static_cast<size_t>(r - 1)] == W_ &&
        std::none_of(queries.begin(), queries.end(),
                     [&](const ZipArQuery& q) { return q.slot == cls_ + r * W_ - 1; })) {
      queries.push_back({cls_ + r * W_ - 1, static_cast<uint32_t>(grid[static_cast<size_t>(r * W_ - 1)]), -1, true});
      placeholder_[static_cast<size_t>(r)] = false;
    }
  // A query's slot is valid once written with its real input; visibility is decided after this
  // forward's writes, so queries see each other's committed-token slots below their own position.
  for (const ZipArQuery& q : queries) slot_valid_[static_cast<size_t>(q.slot)] = q.real_input;
  return queries;
}

}  // namespace vkspec
