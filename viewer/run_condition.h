#pragma once
// What a run on screen is conditioned on, as the viewer names it: a class label, a text prompt
// (Janus-Pro), or another condition only described (caption embeddings in a replayed trace).
#include <cstdint>
#include <string>

#include "decoding/generation.h"
#include "engine/model/condition.h"

namespace vkspec::viewer {

struct RunCondition {
  int64_t class_id = -1;    // a class label's id; -1 for any other condition
  std::string prompt;       // the prompt's whole text ("" without one)
  std::string description;  // Condition::describe(): what a trace records for a non-class run

  static RunCondition of_class(int64_t class_id);
  static RunCondition of(const Condition& condition);
  static RunCondition of(const Generation& image);  // a replayed trace's image

  // For titles and captions: class 3, "an ankle boot" (cut to about max_chars characters).
  std::string text(size_t max_chars = 60) const;
};

// `s` cut at a UTF-8 character boundary to at most max_bytes bytes, "..." marking a cut.
std::string shortened(const std::string& s, size_t max_bytes);

}  // namespace vkspec::viewer
