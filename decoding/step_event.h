#pragma once
// What one step of any strategy did: the single event type the CLI, trace files, benchmarks and
// the viewer consume. Positions are image-token indices (raster order, row * W + col).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/vk/command_stream.h"

namespace vkspec {

constexpr int32_t kUndecided = -1;

struct StepEvent {
  int64_t step = 0;                      // 0-based
  std::vector<int32_t> proposed;         // positions drafted or evaluated this step
  std::vector<int32_t> proposed_tokens;  // their draft tokens (same order; a row without a draft: its sample)
  // Positions whose draft was accepted and committed, and tokens committed as exact samples of
  // the target without a draft (ar's token, a speculative step's extra row).
  std::vector<int32_t> accepted;
  std::vector<int32_t> rejected;              // positions whose draft was rejected
  std::vector<int32_t> resampled;             // positions committed with a resampled token
  std::vector<std::vector<int32_t>> islands;  // rejection islands (MuLo-SD), positions each
  // Drafts a step verifies as separate groups in one forward, positions each: PJD's windows (one
  // per active row), SJD-PAC's proactive tree (one per branch off the main path). Empty otherwise.
  std::vector<std::vector<int32_t>> groups;
  // adaptive-tree: the depth and width of the draft tree this step verified (0: not such a method).
  int32_t tree_depth = 0, tree_width = 0;
  // false: the step committed drafts without a target forward verifying them (vvs's skipped rounds).
  bool verified = true;
  // flashar: per accepted position (same order), the weight g of the backbone's head H in the
  // logits it was sampled from, g H + (1 - g) V, in the conditional row: 1 on row 0 (H alone), 0 on
  // column 0 (V alone), the learned gate elsewhere. Empty for other methods.
  std::vector<float> gates;
  std::vector<int32_t> grid;   // committed token per position, kUndecided elsewhere
  int64_t committed = 0;       // positions committed so far
  int64_t nfe = 0;             // target-model forwards so far
  int64_t draft_forwards = 0;  // drafter forwards so far (draft models, low-res model)
  int64_t head_forwards = 0;   // draft-head runs so far (each over the rows it needs)
  double device_ms = 0;        // GPU time of this step (timestamps; 0 when unavailable)
  // device_ms split by what the commands were for (TargetSession's stages: target, drafter,
  // low_res, heads, sampling); empty without timestamps.
  std::map<std::string, double> device_ms_by_stage;
  // device_ms split by (stage, kernel), with each kernel's command count; empty without timestamps.
  KernelTimes device_ms_by_kernel;
  double wall_ms = 0;  // host time of this step
  bool done = false;
};

}  // namespace vkspec
