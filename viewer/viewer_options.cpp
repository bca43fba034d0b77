#include "viewer/viewer_options.h"

#include <set>

#include "common/error.h"
#include "frontend/arg_parser.h"
#include "frontend/method_options_text.h"
#include "viewer/overlay_settings.h"

namespace vkspec::viewer {

const char* kViewerUsage =
    "usage: vkspec-viewer [options]\n"
    "\n"
    "live runs:   --model FILE --vq FILE [--drafter FILE] [--low-res FILE] [--heads FILE]   (default: shipped models)\n"
    "             --method NAME [--options k=v,...] [--compare NAME [--compare-options k=v,...]]\n"
    "             --class N | --prompt TEXT (a prompt-driven model: Janus-Pro) --seed S\n"
    "             [--cfg S] [--temperature T] [--top-k K] [--top-p P]\n"
    "replay:      --trace FILE [--image I] [--compare-image J] [--vq FILE]   (no model run)\n"
    "kiosk:       --kiosk [--hold SECONDS]    fullscreen, cycles classes (or prompts) and methods on its own\n"
    "             --kiosk-prompts FILE: the prompts a prompt-driven model cycles, one a line (default: examples);\n"
    "             visitors type their own\n"
    "output:      --screenshot FILE --frames N [--step K] [--layout FILE]\n"
    "             --record DIR (every frame as PNG)   --save-trace FILE (the runs shown, as a trace)\n"
    "display:     --width W --height H --fps F (0 = uncapped) --speed STEPS_PER_S (replay)\n"
    "             --overlays accepted,rejected,resampled,drafted,islands,groups,heat,tree,unverified,gate,\n"
    "             dim | all | none (tree: the draft-tree depth of the step that committed each cell,\n"
    "             adaptive-tree and vvs --tree adaptive; unverified: cells committed without a target\n"
    "             forward verifying them, vvs's skipped rounds; gate: flashar's weight of its\n"
    "             horizontal head in each cell's logits, blue V to orange H)\n"
    "             --timeout SECONDS (--screenshot gives up after this long)\n"
    "             --batch N: GPU commands per submission while decoding (default 6; 0 = whole steps);\n"
    "             smaller batches let frames through sooner on a device with one queue (lavapipe)\n"
    "\n"
    "--screenshot renders at least N frames and saves the first frame after that at which every run\n"
    "shown has finished (and the timeline reached --step K when given). Keys: space play/pause,\n"
    "left/right step, Home/End first/last step, Esc quit.\n";

namespace {

// Whether the model takes a class or a prompt is known once it is loaded (initial_controls); what
// contradicts itself is refused here.
void check_condition_options(const ViewerOptions& o, bool kiosk_prompts_given) {
  if (o.prompt && o.class_given) throw Error("vkspec-viewer: --prompt and --class exclude each other");
  if (o.prompt && !o.trace.empty())
    throw Error("vkspec-viewer: --prompt runs the model; a --trace replays its images' own prompts");
  if (o.prompt && o.kiosk)
    throw Error("vkspec-viewer: --kiosk cycles its own prompts (--kiosk-prompts FILE); visitors type theirs");
  if (kiosk_prompts_given && !o.kiosk) throw Error("vkspec-viewer: --kiosk-prompts needs --kiosk");
  if (kiosk_prompts_given && o.kiosk_prompts.empty()) throw Error("vkspec-viewer: --kiosk-prompts needs a FILE");
}

}  // namespace

ViewerOptions parse_viewer_options(const std::vector<std::string>& args) {
  std::set<std::string> options = {
      "--method",  "--options",       "--compare", "--compare-options", "--class",  "--seed",  "--trace",
      "--image",   "--compare-image", "--hold",    "--screenshot",      "--frames", "--step",  "--layout",
      "--record",  "--save-trace",    "--width",   "--height",          "--fps",    "--speed", "--overlays",
      "--timeout", "--batch",         "--prompt",  "--kiosk-prompts"};
  for (const std::string& f : frontend::model_file_options()) options.insert(f);
  std::set<std::string> flags = {"--kiosk"};
  for (const frontend::OptionDoc& o : frontend::sampler_option_table())
    (o.value.empty() ? flags : options).insert(o.name);
  frontend::ArgParser ap("vkspec-viewer", flags, options);
  ap.parse(args);
  ViewerOptions o;
  o.models = frontend::model_files(ap, ap.get("--prompt").has_value() || ap.get("--kiosk-prompts").has_value());
  o.method = ap.get_or("--method", "");
  auto method_options = [&](const char* flag) {
    try {
      return frontend::parse_method_options(ap.get_or(flag, ""));
    } catch (const Error& e) {
      throw Error(std::string("vkspec-viewer: ") + flag + ": " + e.what());
    }
  };
  o.method_options = method_options("--options");
  o.compare = ap.get_or("--compare", "");
  o.compare_options = method_options("--compare-options");
  o.class_id = ap.get_int("--class", 0, 0, 1 << 30);
  o.class_given = ap.get("--class").has_value();
  o.prompt = ap.get("--prompt");
  o.seed = static_cast<uint64_t>(ap.get_int("--seed", 0, 0, (1ll << 62)));
  o.sampler = frontend::sampler_overrides(ap);
  o.trace = ap.get_or("--trace", "");
  o.trace_image = ap.get_int("--image", 0, 0, 1 << 30);
  o.trace_compare = ap.get_int("--compare-image", -1, -1, 1 << 30);
  o.kiosk = ap.flag("--kiosk");
  o.kiosk_hold_s = ap.get_double("--hold", 4, 0, 3600);
  o.kiosk_prompts = ap.get_or("--kiosk-prompts", "");
  o.screenshot = ap.get_or("--screenshot", "");
  o.frames = ap.get_int("--frames", o.screenshot.empty() ? 0 : 1, 1, 1 << 30);
  o.step = ap.get_int("--step", -1, -1, 1 << 30);
  o.layout_file = ap.get_or("--layout", "");
  o.record_dir = ap.get_or("--record", "");
  o.save_trace = ap.get_or("--save-trace", "");
  o.width = static_cast<int>(ap.get_int("--width", 1280, 320, 16384));
  o.height = static_cast<int>(ap.get_int("--height", 720, 240, 16384));
  o.fps = ap.get_double("--fps", 60, 0, 1000);
  o.replay_speed = ap.get_double("--speed", 30, 0.1, 100000);
  o.timeout_s = ap.get_double("--timeout", 600, 1, 1e6);
  o.batch_limit = static_cast<uint32_t>(ap.get_int("--batch", 6, 0, 1 << 20));
  if (auto ov = ap.get("--overlays")) {
    o.overlays = OverlaySettings::parse_list(*ov);
    o.overlays_given = true;
  }
  if (ap.get("--frames") && o.screenshot.empty()) throw Error("vkspec-viewer: --frames needs --screenshot FILE");
  if (!o.layout_file.empty() && o.screenshot.empty()) throw Error("vkspec-viewer: --layout needs --screenshot FILE");
  if (o.kiosk && !o.trace.empty()) throw Error("vkspec-viewer: --kiosk runs the model; it cannot replay --trace");
  if (o.kiosk && o.step >= 0) throw Error("vkspec-viewer: --step pins the timeline, which --kiosk drives itself");
  if (o.trace.empty() && (ap.get("--image") || ap.get("--compare-image")))
    throw Error("vkspec-viewer: --image and --compare-image select images of a --trace");
  if (o.compare.empty() && ap.get("--compare-options"))
    throw Error("vkspec-viewer: --compare-options needs --compare METHOD");
  check_condition_options(o, ap.get("--kiosk-prompts").has_value());
  return o;
}

uint32_t OverlaySettings::parse_list(const std::string& list) {
  if (list == "all") {
    uint32_t all = 0;
    for (const auto& n : kOverlayNames) all |= n.bit;
    return all;
  }
  if (list == "none") return 0;
  uint32_t bits = 0;
  size_t i = 0;
  while (i <= list.size()) {
    size_t end = list.find(',', i);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(i, end - i);
    i = end + 1;
    if (item.empty()) continue;
    bool found = false;
    for (const auto& n : kOverlayNames)
      if (item == n.name) bits |= n.bit, found = true;
    if (!found) {
      std::string known;
      for (const auto& n : kOverlayNames) known += std::string(known.empty() ? "" : ", ") + n.name;
      throw Error("vkspec-viewer: unknown overlay '" + item + "' (known: " + known + ", all, none)");
    }
  }
  return bits;
}

}  // namespace vkspec::viewer
