#pragma once
// The step the canvases show: the newest one (live), advancing at the replay speed (replay), the
// step of --step until the user moves, or where the user put it (keys, button, slider).
#include <cstdint>

namespace vkspec::viewer {

struct Timeline {
  int64_t step = 0;      // displayed step index
  bool follow = true;    // live: keep showing the newest step
  bool playing = false;  // replay: advance at the replay speed
  double position = 0;   // fractional step while playing
  int64_t pinned = -1;   // --step K until the user moves the timeline

  // New runs: their first step, followed (live) or played (replay) unless a step is pinned.
  void restart(bool replay);
  // Once per frame: `steps` shown so far, `ended` when every run has ended, `dt` seconds since the
  // last frame, `speed` replay steps per second.
  void advance(int64_t steps, bool ended, double dt, double speed);
  // The user's moves.
  void go_to(int64_t step, int64_t steps);
  void toggle_play(int64_t steps);
  void set_follow();
};

}  // namespace vkspec::viewer
