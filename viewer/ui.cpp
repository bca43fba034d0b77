#include "viewer/ui.h"

#include <algorithm>
#include <string>

#include "viewer/method_info.h"
#include "viewer/ui_widgets.h"

namespace vkspec::viewer {
namespace {

ImVec4 overlay_colour(ShowBits bit) {
  switch (bit) {
    case kShowAccepted: return {0.16f, 0.86f, 0.31f, 1};
    case kShowRejected: return {0.94f, 0.18f, 0.16f, 1};
    case kShowResampled: return {1.00f, 0.69f, 0.00f, 1};
    case kShowDrafted: return {0.35f, 0.75f, 1.00f, 1};
    case kShowIslands: return {0.85f, 0.45f, 1.00f, 1};
    case kShowHeat: return {0.99f, 0.91f, 0.30f, 1};
    case kShowTree: return {0.13f, 0.57f, 0.55f, 1};  // the middle of its ramp
    case kShowUnverified: return {0.65f, 1.00f, 0.00f, 1};
    case kShowGate: return {0.98f, 0.55f, 0.10f, 1};  // its H end
    default: return {0.3f, 0.3f, 0.3f, 1};
  }
}

// A 60-pixel ramp through three colours between two labels, on the current line.
void legend_ramp(const std::string& left, ImU32 a, ImU32 b, ImU32 c, const std::string& right) {
  ImGui::TextUnformatted(left.c_str());
  ImGui::SameLine();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilledMultiColor(p, ImVec2(p.x + 30, p.y + 12), a, b, b, a);
  dl->AddRectFilledMultiColor(ImVec2(p.x + 30, p.y), ImVec2(p.x + 60, p.y + 12), b, c, c, b);
  ImGui::Dummy(ImVec2(62, 12));
  ImGui::SameLine();
  ImGui::TextUnformatted(right.c_str());
}

}  // namespace

Ui::Ui(const ViewerOptions& options, DeviceSession& session, const ViewerModels& models, Runs& runs,
       std::vector<std::string> methods)
    : opt_(options),
      session_(session),
      models_(models),
      runs_(runs),
      methods_(std::move(methods)),
      controls_(initial_controls(options, methods_, models)) {
  if (opt_.overlays_given) overlays_.show = opt_.overlays;
}

bool Ui::take_start_request() {
  const bool r = start_requested_;
  start_requested_ = false;
  return r;
}

void Ui::handle_keys() {
  const ImGuiIO& io = ImGui::GetIO();
  // Esc in a text box only leaves it: a kiosk visitor typing a prompt must not close the kiosk.
  if (io.WantTextInput) return;
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) session_.window().request_close();
  if (opt_.kiosk) return;
  Timeline& t = runs_.timeline();
  const int64_t n = runs_.available_steps();
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space))) t.toggle_play(n);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) t.go_to(t.step - 1, n);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) t.go_to(t.step + 1, n);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home))) t.go_to(0, n);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End))) t.go_to(n - 1, n);
}

void Ui::build() {
  const ImGuiIO& io = ImGui::GetIO();
  const float W = io.DisplaySize.x, H = io.DisplaySize.y;
  handle_keys();
  if (opt_.kiosk) {
    // A prompt-driven model's caption also holds the visitors' prompt box.
    const float caption = std::max(120.0f, H * 0.2f) + (models_.takes_prompt() ? 48.0f : 0.0f);
    build_canvas_area(0, 0, W, H - caption, 1.5f);
    build_kiosk_caption(0, H - caption, W, caption);
    return;
  }
  const float left = 300, bottom = 210;
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(left, H));
  ImGui::Begin("vkspec viewer", nullptr, widgets::kFixed);
  build_run_panel();
  build_overlay_panel();
  ImGui::End();
  build_canvas_area(left, 0, W - left, H - bottom, 1.0f);
  build_timeline_panel(left, H - bottom, W - left, bottom);
}

void Ui::build_run_panel() {
  Context& ctx = session_.context();
  const AllocatorStats st = ctx.allocator().stats();
  ImGui::TextWrapped("%s", ctx.caps().name.c_str());
  ImGui::Text("device memory %.1f MiB, %.1f ms/frame", static_cast<double>(st.device_bytes_in_use) / (1 << 20),
              1000.0 / std::max(1.0f, ImGui::GetIO().Framerate));
  ImGui::Separator();
  if (models_.replay())
    build_trace_controls();
  else
    build_method_controls();
  const ImVec4 red(1, 0.35f, 0.3f, 1);
  if (!error_.empty()) widgets::wrapped(red, error_);
  for (const LaneView& l : runs_.lanes())
    if (l.record->state() == RunState::Failed) widgets::wrapped(red, l.label + " failed: " + l.record->error());
  ImGui::Separator();
}

void Ui::build_trace_controls() {
  const Trace& trace = *models_.replay();
  const int64_t grid = models_.grid();
  ImGui::TextWrapped("Trace %s", opt_.trace.c_str());
  ImGui::Text("%zu image(s), %lldx%lld grid", trace.images.size(), static_cast<long long>(grid),
              static_cast<long long>(grid));
  std::vector<std::string> names;
  for (size_t i = 0; i < trace.images.size(); ++i) {
    const Generation& g = trace.images[i];
    names.push_back(std::to_string(i) + ": " + g.method + ", " + RunCondition::of(g).text(40) + ", seed " +
                    std::to_string(g.seed));
  }
  widgets::combo_of("Image", &controls_.trace_image, names);
  std::vector<std::string> with = {"none"};
  with.insert(with.end(), names.begin(), names.end());
  int cmp = controls_.trace_compare + 1;
  if (widgets::combo_of("Compare", &cmp, with)) controls_.trace_compare = cmp - 1;
  if (ImGui::Button("Show")) start_requested_ = true;
  if (!models_.decoder_note().empty()) widgets::wrapped(ImVec4(1, 0.8f, 0.3f, 1), models_.decoder_note());
}

void Ui::build_method_controls() {
  const int64_t classes = models_.num_classes();
  widgets::combo_of("Method", &controls_.method, methods_);
  ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.7f, 0.7f, 0.75f, 1));
  ImGui::TextWrapped("%s", method_summary(methods_[static_cast<size_t>(controls_.method)]).c_str());
  ImGui::PopStyleColor();
  ImGui::InputTextWithHint("Options", "window=16,...", controls_.options, sizeof(controls_.options));
  bool compare = controls_.compare >= 0;
  if (ImGui::Checkbox("Side by side", &compare)) controls_.compare = compare ? 0 : -1;
  if (compare) {
    widgets::combo_of("With", &controls_.compare, methods_);
    ImGui::InputTextWithHint("Options##b", "window=16,...", controls_.compare_options,
                             sizeof(controls_.compare_options));
  }
  const bool prompt = models_.takes_prompt();
  if (prompt)
    build_prompt_box();
  else
    ImGui::SliderInt("Class", &controls_.class_id, 0, static_cast<int>(std::max<int64_t>(0, classes - 1)));
  ImGui::InputScalar("Seed", ImGuiDataType_S64, &controls_.seed);
  controls_.seed = std::max(0ll, controls_.seed);
  ImGui::Text("Sampler");
  ImGui::SliderFloat("CFG", &controls_.sampler.cfg, 0.0f, 10.0f, "%.2f");
  ImGui::SliderFloat("Temperature", &controls_.sampler.temperature, 0.05f, 3.0f, "%.2f");
  int top_k = static_cast<int>(controls_.sampler.top_k);
  if (ImGui::InputInt("Top-k", &top_k)) controls_.sampler.top_k = std::max(0, top_k);
  ImGui::SliderFloat("Top-p", &controls_.sampler.top_p, 0.01f, 1.0f, "%.2f");
  if (ImGui::Button(prompt ? "Generate" : "Run")) start_requested_ = true;
  ImGui::SameLine();
  if (!prompt && ImGui::Button("Next class")) {
    controls_.class_id = static_cast<int>((controls_.class_id + 1) % std::max<int64_t>(1, classes));
    start_requested_ = true;
  }
  if (!prompt) ImGui::SameLine();
  if (ImGui::Button("Next seed")) {
    ++controls_.seed;
    start_requested_ = true;
  }
}

void Ui::build_overlay_panel() {
  ImGui::Text("Overlays");
  for (const OverlayName& n : kOverlayNames) {
    bool on = overlays_.on(n.bit);
    ImGui::ColorButton((std::string("##c") + n.name).c_str(), overlay_colour(n.bit),
                       ImGuiColorEditFlags_NoTooltip | ImGuiColorEditFlags_NoDragDrop, ImVec2(12, 12));
    ImGui::SameLine();
    if (ImGui::Checkbox(n.name, &on)) overlays_.set(n.bit, on);
  }
  ImGui::SliderFloat("Dim", &overlays_.dim, 0.0f, 1.0f, "%.2f");
  ImGui::SliderFloat("Tint", &overlays_.fill_alpha, 0.0f, 1.0f, "%.2f");
  // Each tinting overlay's legend: its ramp's stops, as the canvas shader has them.
  if (overlays_.on(kShowHeat))
    legend_ramp("acceptance: low", IM_COL32(26, 8, 77, 255), IM_COL32(217, 64, 77, 255), IM_COL32(252, 232, 77, 255),
                "high");
  if (overlays_.on(kShowTree)) {
    // The canvas scales each lane's ramp to the deepest tree of its run so far.
    int32_t deepest = 0;
    for (const LaneView& l : runs_.lanes()) deepest = std::max(deepest, l.cells.tree_depth_max);
    if (deepest > 0)
      legend_ramp("tree depth: 1", IM_COL32(31, 26, 115, 255), IM_COL32(33, 145, 140, 255), IM_COL32(252, 232, 36, 255),
                  std::to_string(deepest) + " (deepest)");
  }
  if (overlays_.on(kShowGate))
    legend_ramp("head: V", IM_COL32(38, 115, 242, 255), IM_COL32(235, 235, 235, 255), IM_COL32(250, 140, 26, 255),
                "H (flashar's gate)");
  ImGui::Separator();
  ImGui::TextWrapped("Keys: space play/pause, left/right step, Home/End, Esc quit.");
}

}  // namespace vkspec::viewer
