#pragma once
// PJD's staircase (pjd_strategy.h), pure: which image rows are active, each active row's Jacobi
// window, and which cache slots each query of a step may see. No GPU here, so the tests can check
// the schedule and the row-causal mask directly.
//
// Rows of a W x W grid. Row 0 is active from the start; row r + 1 becomes active once row r has
// `lag` tokens committed; a row stops being active when complete. The top active row (the first
// incomplete one) gets min(tokens left in it, window) queries, every other active row
// min(c[r - 1] - (lead - 1) - c[r], window), so it predicts column c only once the row above has
// committed c + lead tokens (the paper's lead 1: never a column the row above has not committed;
// ZipAR's window w is lead w). A row with no query (no such column) waits this step.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkspec {

// One active row's window: queries predicting columns [first, first + queries) of `row`. Query 0
// is fed the row's last committed token (the anchor; for first == 0 the token before the row,
// (row - 1, W - 1)), query t > 0 the draft for column first + t - 1.
struct PjdWindow {
  int64_t row = 0, first = 0, queries = 0;
  bool top = false;  // the top active row: verified exactly, commits a correction or bonus token
};

class PjdSchedule {
 public:
  // width: W (the grid is W x W); window >= 1; lag and lead in [1, W].
  PjdSchedule(int64_t width, int64_t window, int64_t lag, int64_t lead = 1);

  // This step's windows, rows in order; rows without a query are left out.
  std::vector<PjdWindow> windows() const;
  // Adds `tokens` committed tokens to `row` (its columns from committed(row) on).
  void commit(int64_t row, int64_t tokens);
  // Activates every row whose row above has reached the lag (after a step's commits).
  void activate_rows();

  int64_t committed(int64_t row) const { return committed_[static_cast<size_t>(row)]; }
  bool started(int64_t row) const { return started_[static_cast<size_t>(row)]; }
  bool complete(int64_t row) const { return committed(row) == W_; }
  bool done() const;
  int64_t width() const { return W_; }

 private:
  int64_t W_, window_, lag_, lead_;
  std::vector<int64_t> committed_;
  std::vector<bool> started_;
};

// Attention of one step. Each query writes the slot of the token it is fed (slot = sequence
// position); a slot is "valid" when it holds the key and value of a committed token fed as
// itself. Row-causal (the paper's mask): a query sees the valid slots below its own and the slots
// its own window's drafts write this step, never another row's pending drafts. Full (the paper's
// Tab. 4 ablation): it sees every draft written this step below it too. A placeholder (a row's
// first query fed a stand-in for a token not yet decoded) is seen by its own query alone.
enum class PjdMask { RowCausal, Full };
enum class PjdFeed { Committed, Placeholder, Draft };

class PjdVisibility {
 public:
  // valid: per cache slot, before this step (copied); the step's queries are added with add().
  PjdVisibility(PjdMask mask, std::vector<bool> valid);
  // Query i (in the order added) at `slot`, of `window` (an index; repairs take -1), fed `feed`.
  void add(int64_t slot, int64_t window, PjdFeed feed);
  // Whether query i sees slot s < its own slot.
  bool sees(int64_t i, int64_t s) const;
  // Valid slots after the step, before the host knows which drafts were accepted (drafts and
  // placeholders invalid, committed tokens fed this step valid).
  const std::vector<bool>& valid() const { return valid_; }

 private:
  PjdMask mask_;
  std::vector<bool> valid_;
  std::vector<int64_t> draft_window_;  // per slot: the window whose draft writes it this step, else -2
  std::vector<int64_t> window_of_;     // per query
};

}  // namespace vkspec
