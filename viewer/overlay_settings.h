#pragma once
// Which overlays the canvas draws; the bits go to the fragment shader (viewer/shaders/canvas.frag).
#include <cstdint>
#include <string>

namespace vkspec::viewer {

enum ShowBits : uint32_t {
  kShowAccepted = 1,
  kShowRejected = 2,
  kShowResampled = 4,
  kShowDrafted = 8,
  kShowIslands = 16,
  kShowHeat = 32,
  kShowDim = 64,
  kShowGroups = 128,
  kShowTree = 256,        // the draft-tree depth of the step that committed each cell
  kShowUnverified = 512,  // cells committed without a target forward verifying them
  kShowGate = 1024,       // flashar: the weight of the horizontal head in each cell's logits
};

struct OverlaySettings {
  // tree, unverified and gate draw nothing for runs without tree sizes, unverified steps or gates.
  // tree and gate, like heat, tint every decided cell: off until asked for.
  uint32_t show = kShowAccepted | kShowRejected | kShowResampled | kShowDrafted | kShowIslands | kShowGroups |
                  kShowDim | kShowUnverified;
  float dim = 0.3f;          // brightness of undecided cells
  float fill_alpha = 0.35f;  // tint of marked cells (their outline is the full colour)
  float heat_alpha = 0.6f;

  bool on(ShowBits b) const { return (show & b) != 0; }
  void set(ShowBits b, bool v) { show = v ? (show | b) : (show & ~static_cast<uint32_t>(b)); }
  // "accepted,rejected,islands" (names below, or "all" / "none"); throws Error on unknown names.
  static uint32_t parse_list(const std::string& list);
};

// Display names in the order the controls list them.
struct OverlayName {
  ShowBits bit;
  const char* name;
};
constexpr OverlayName kOverlayNames[] = {
    {kShowAccepted, "accepted"}, {kShowRejected, "rejected"}, {kShowResampled, "resampled"},
    {kShowDrafted, "drafted"},   {kShowIslands, "islands"},   {kShowGroups, "groups"},
    {kShowHeat, "heat"},         {kShowTree, "tree"},         {kShowUnverified, "unverified"},
    {kShowGate, "gate"},         {kShowDim, "dim"},
};

}  // namespace vkspec::viewer
