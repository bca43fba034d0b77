#pragma once
// ZipAR's schedule for one image (zipar_strategy.h has the method): which rows sample a token in
// this forward, what each query is fed, and which cache slots hold the key and value of a
// committed token. ZipArStrategy keeps one; ZipArBatchStrategy one per lane.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkspec {

// The token fed at the slot of (r - 1, W - 1), which predicts row r's first token, on a grid of
// width W where row r - 1 has `above` tokens decoded: that token once row r - 1 is complete, else
// a placeholder (the token above it, (r - 2, W - 1), when decoded, else row r - 1's latest token).
// Also PJD's (pjd_strategy.h) for the first query of a row that starts early.
uint32_t row_start_token(const std::vector<int32_t>& grid, int64_t W, int64_t r, int64_t above);

struct ZipArQuery {
  int64_t slot;      // = sequence position
  uint32_t fed;      // image token fed (unused for the condition query)
  int64_t predicts;  // image token sampled, -1 for a repair
  bool real_input;   // the fed token is the committed token of that position
};

class ZipArRows {
 public:
  // W: grid width; window: tokens a row stays behind the row above; cls_token_num: condition
  // positions (all but the last prefilled); cache_slots: the cache rows' slots.
  ZipArRows(int64_t W, int64_t window, int64_t cls_token_num, int64_t cache_slots);

  // This forward's queries for the image's grid: one per active row, then the repair of a
  // placeholder whose real token now exists. Marks the slots the queries make valid.
  std::vector<ZipArQuery> plan(const std::vector<int32_t>& grid);
  // Whether slot s holds the key and value of a committed fed token (what a query may see).
  bool slot_valid(int64_t s) const { return slot_valid_[static_cast<size_t>(s)]; }
  // Image token n was sampled.
  void sampled(int64_t n) { ++next_col_[static_cast<size_t>(n / W_)]; }

 private:
  std::vector<int64_t> active_rows() const;

  int64_t W_, window_, cls_;
  std::vector<int64_t> next_col_;  // per image row: tokens decoded so far
  std::vector<bool> placeholder_;  // per image row: its first query was fed a placeholder
  std::vector<bool> slot_valid_;   // per cache slot
};

}  // namespace vkspec
