#include "viewer/timeline.h"

#include <algorithm>

namespace vkspec::viewer {

void Timeline::restart(bool replay) {
  step = 0;
  position = 0;
  follow = !replay && pinned < 0;
  playing = replay && pinned < 0;
}

void Timeline::advance(int64_t steps, bool ended, double dt, double speed) {
  if (steps == 0) {
    step = 0;
    return;
  }
  if (pinned >= 0) {
    step = std::min(pinned, steps - 1);
    playing = false;
  } else if (playing) {
    position = std::min(position + dt * speed, static_cast<double>(steps - 1));
    step = static_cast<int64_t>(position);
    if (ended && step >= steps - 1) playing = false;
  } else if (follow) {
    step = steps - 1;
  }
  step = std::clamp<int64_t>(step, 0, steps - 1);
  if (!playing) position = static_cast<double>(step);
}

void Timeline::go_to(int64_t target, int64_t steps) {
  pinned = -1;
  follow = false;
  playing = false;
  step = std::clamp<int64_t>(target, 0, std::max<int64_t>(0, steps - 1));
}

void Timeline::toggle_play(int64_t steps) {
  pinned = -1;
  follow = false;
  playing = !playing;
  if (playing && step >= steps - 1) position = 0;  // from the start again
}

void Timeline::set_follow() {
  follow = true;
  playing = false;
  pinned = -1;
}

}  // namespace vkspec::viewer
