// The viewer's ImGui panels: run settings, overlays, the canvases with their NFE race bars, the
// timeline with live statistics, and the kiosk caption.
#include <algorithm>
#include <cfloat>
#include <cstdio>

#include "viewer/app.h"
#include "viewer/method_info.h"
#include "viewer/run_stats.h"

namespace vkspec::viewer {
namespace {

constexpr ImGuiWindowFlags kFixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                    ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings;
constexpr ImGuiWindowFlags kBare = kFixed | ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoBackground |
                                   ImGuiWindowFlags_NoBringToFrontOnFocus;

ImVec4 overlay_colour(ShowBits bit) {
  switch (bit) {
    case kShowAccepted: return {0.16f, 0.86f, 0.31f, 1};
    case kShowRejected: return {0.94f, 0.18f, 0.16f, 1};
    case kShowResampled: return {1.00f, 0.69f, 0.00f, 1};
    case kShowDrafted: return {0.35f, 0.75f, 1.00f, 1};
    case kShowIslands: return {0.85f, 0.45f, 1.00f, 1};
    case kShowHeat: return {0.99f, 0.91f, 0.30f, 1};
    default: return {0.3f, 0.3f, 0.3f, 1};
  }
}

const char* state_name(RunState s) {
  switch (s) {
    case RunState::Running: return "running";
    case RunState::Finished: return "finished";
    case RunState::Failed: return "failed";
    case RunState::Cancelled: return "cancelled";
  }
  return "";
}

void wrapped(const ImVec4& colour, const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, colour);
  ImGui::TextWrapped("%s", text.c_str());
  ImGui::PopStyleColor();
}

bool combo_of(const char* label, int* index, const std::vector<std::string>& items) {
  bool changed = false;
  const char* preview = *index >= 0 && *index < static_cast<int>(items.size()) ? items[*index].c_str() : "";
  if (ImGui::BeginCombo(label, preview)) {
    for (int i = 0; i < static_cast<int>(items.size()); ++i)
      if (ImGui::Selectable(items[i].c_str(), i == *index)) *index = i, changed = true;
    ImGui::EndCombo();
  }
  return changed;
}

}  // namespace

std::string App::lane_title(const LaneView& l) const {
  char buf[512];
  const size_t steps = l.frames.size();
  std::snprintf(buf, sizeof(buf), "%s  class %lld, seed %llu  step %zu/%zu%s", l.label.c_str(),
                static_cast<long long>(l.record->class_id()), static_cast<unsigned long long>(l.record->seed()),
                steps ? l.shown_step + 1 : 0, steps, l.record->ended() ? "" : "+");
  return buf;
}

void App::handle_keys() {
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) window_->request_close();
  if (opt_.kiosk || io.WantTextInput) return;
  const int64_t n = available_steps();
  auto go = [&](int64_t step) {
    timeline_.pinned = -1;
    timeline_.follow = false;
    timeline_.playing = false;
    timeline_.step = std::clamp<int64_t>(step, 0, std::max<int64_t>(0, n - 1));
  };
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space))) {
    timeline_.pinned = -1;
    timeline_.follow = false;
    timeline_.playing = !timeline_.playing;
    if (timeline_.playing && timeline_.step >= n - 1) timeline_.position = 0;
  }
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) go(timeline_.step - 1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) go(timeline_.step + 1);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home))) go(0);
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End))) go(n - 1);
}

void App::build_ui() {
  const ImGuiIO& io = ImGui::GetIO();
  const float W = io.DisplaySize.x, H = io.DisplaySize.y;
  handle_keys();
  if (opt_.kiosk) {
    const float caption = std::max(120.0f, H * 0.2f);
    build_canvas_area(0, 0, W, H - caption, 1.5f);
    build_kiosk_caption(0, H - caption, W, caption);
    return;
  }
  const float left = 300, bottom = 210;
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(left, H));
  ImGui::Begin("vkspec viewer", nullptr, kFixed);
  build_run_panel();
  build_overlay_panel();
  ImGui::End();
  build_canvas_area(left, 0, W - left, H - bottom, 1.0f);
  build_timeline_panel(left, H - bottom, W - left, bottom);
}

void App::build_run_panel() {
  const AllocatorStats st = ctx_->allocator().stats();
  ImGui::TextWrapped("%s", ctx_->caps().name.c_str());
  ImGui::Text("device memory %.1f MiB, %.1f ms/frame", static_cast<double>(st.device_bytes_in_use) / (1 << 20),
              1000.0 / std::max(1.0f, ImGui::GetIO().Framerate));
  ImGui::Separator();
  if (trace_) {
    ImGui::TextWrapped("Trace %s", opt_.trace.c_str());
    ImGui::Text("%zu image(s), %lldx%lld grid", trace_->images.size(), static_cast<long long>(grid_),
                static_cast<long long>(grid_));
    std::vector<std::string> names;
    for (size_t i = 0; i < trace_->images.size(); ++i) {
      const Generation& g = trace_->images[i];
      names.push_back(std::to_string(i) + ": " + g.method + ", class " + std::to_string(g.class_id) + ", seed " +
                      std::to_string(g.seed));
    }
    combo_of("Image", &controls_.trace_image, names);
    std::vector<std::string> with = {"none"};
    with.insert(with.end(), names.begin(), names.end());
    int cmp = controls_.trace_compare + 1;
    if (combo_of("Compare", &cmp, with)) controls_.trace_compare = cmp - 1;
    if (ImGui::Button("Show")) start_requested_ = true;
    if (!decoder_note_.empty()) wrapped(ImVec4(1, 0.8f, 0.3f, 1), decoder_note_);
  } else {
    combo_of("Method", &controls_.method, methods_);
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.7f, 0.7f, 0.75f, 1));
    ImGui::TextWrapped("%s", method_summary(methods_[static_cast<size_t>(controls_.method)]).c_str());
    ImGui::PopStyleColor();
    ImGui::InputTextWithHint("Options", "window=16,...", controls_.options, sizeof(controls_.options));
    bool compare = controls_.compare >= 0;
    if (ImGui::Checkbox("Side by side", &compare)) controls_.compare = compare ? 0 : -1;
    if (compare) {
      combo_of("With", &controls_.compare, methods_);
      ImGui::InputTextWithHint("Options##b", "window=16,...", controls_.compare_options,
                               sizeof(controls_.compare_options));
    }
    ImGui::SliderInt("Class", &controls_.class_id, 0, static_cast<int>(std::max<int64_t>(0, num_classes_ - 1)));
    ImGui::InputScalar("Seed", ImGuiDataType_S64, &controls_.seed);
    controls_.seed = std::max(0ll, controls_.seed);
    ImGui::Text("Sampler");
    ImGui::SliderFloat("CFG", &controls_.sampler.cfg, 0.0f, 10.0f, "%.2f");
    ImGui::SliderFloat("Temperature", &controls_.sampler.temperature, 0.05f, 3.0f, "%.2f");
    int top_k = static_cast<int>(controls_.sampler.top_k);
    if (ImGui::InputInt("Top-k", &top_k)) controls_.sampler.top_k = std::max(0, top_k);
    ImGui::SliderFloat("Top-p", &controls_.sampler.top_p, 0.01f, 1.0f, "%.2f");
    if (ImGui::Button("Run")) start_requested_ = true;
    ImGui::SameLine();
    if (ImGui::Button("Next class")) {
      controls_.class_id = static_cast<int>((controls_.class_id + 1) % std::max<int64_t>(1, num_classes_));
      start_requested_ = true;
    }
    ImGui::SameLine();
    if (ImGui::Button("Next seed")) {
      ++controls_.seed;
      start_requested_ = true;
    }
  }
  if (!ui_error_.empty()) wrapped(ImVec4(1, 0.35f, 0.3f, 1), ui_error_);
  for (const LaneView& l : lanes_)
    if (l.record->state() == RunState::Failed)
      wrapped(ImVec4(1, 0.35f, 0.3f, 1), l.label + " failed: " + l.record->error());
  ImGui::Separator();
}

void App::build_overlay_panel() {
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
  if (overlays_.on(kShowHeat)) {
    ImGui::Text("acceptance: low");
    ImGui::SameLine();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilledMultiColor(p, ImVec2(p.x + 60, p.y + 12), IM_COL32(26, 8, 77, 255), IM_COL32(252, 232, 77, 255),
                                IM_COL32(252, 232, 77, 255), IM_COL32(26, 8, 77, 255));
    ImGui::Dummy(ImVec2(62, 12));
    ImGui::SameLine();
    ImGui::Text("high");
  }
  ImGui::Separator();
  ImGui::TextWrapped("Keys: space play/pause, left/right step, Home/End, Esc quit.");
}

void App::build_canvas_area(float x, float y, float w, float h, float scale) {
  ImGui::SetNextWindowPos(ImVec2(x, y));
  ImGui::SetNextWindowSize(ImVec2(w, h));
  ImGui::Begin("##canvases", nullptr, kBare);
  ImGui::SetWindowFontScale(scale);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const size_t n = std::max<size_t>(1, lanes_.size());
  const float pad = 10, line = ImGui::GetTextLineHeightWithSpacing(), bar = line + 4;
  const float colw = (w - pad * static_cast<float>(n + 1)) / static_cast<float>(n);
  const float side = std::max(16.0f, std::min(colw, h - line - bar - pad * 3));
  for (size_t i = 0; i < lanes_.size(); ++i) {
    LaneView& l = lanes_[i];
    const float cx = x + pad + static_cast<float>(i) * (colw + pad);
    ImGui::SetCursorScreenPos(ImVec2(cx, y + pad));
    ImGui::TextUnformatted(lane_title(l).c_str());
    l.p0 = ImVec2(std::floor(cx + (colw - side) / 2), std::floor(y + pad + line));
    l.p1 = ImVec2(l.p0.x + std::floor(side), l.p0.y + std::floor(side));
    l.canvas->draw(dl, l.p0, l.p1, overlays_);
    if (overlays_.on(kShowIslands) && grid_ > 0) {
      const float cell = (l.p1.x - l.p0.x) / static_cast<float>(grid_);
      for (const IslandLabel& il : l.islands) {
        const auto c = island_colour(il.id);
        const ImVec2 at(l.p0.x + static_cast<float>(il.anchor % grid_) * cell + 2,
                        l.p0.y + static_cast<float>(il.anchor / grid_) * cell + 1);
        const std::string text = "#" + std::to_string(il.id);
        const ImVec2 size = ImGui::CalcTextSize(text.c_str());
        dl->AddRectFilled(at, ImVec2(at.x + size.x + 2, at.y + size.y), IM_COL32(0, 0, 0, 190));
        dl->AddText(ImVec2(at.x + 1, at.y), ImGui::GetColorU32(ImVec4(c[0], c[1], c[2], 1)), text.c_str());
      }
    }
    // The race: how far each run is, and how many target forwards it took to get there.
    const RunStats s = run_stats(l.frames, l.shown_step == SIZE_MAX ? 0 : l.shown_step, l.record->tokens());
    char text[160];
    if (l.record->state() == RunState::Failed)
      std::snprintf(text, sizeof(text), "failed");
    else
      std::snprintf(text, sizeof(text), "NFE %lld   %lld/%lld tokens   %.2f per forward",
                    static_cast<long long>(s.nfe), static_cast<long long>(s.committed),
                    static_cast<long long>(s.tokens), s.accepted_length);
    ImGui::SetCursorScreenPos(ImVec2(l.p0.x, l.p1.y + pad / 2));
    ImGui::ProgressBar(s.tokens ? static_cast<float>(s.committed) / static_cast<float>(s.tokens) : 0.0f,
                       ImVec2(l.p1.x - l.p0.x, bar), text);
  }
  ImGui::End();
}

void App::build_timeline_panel(float x, float y, float w, float h) {
  ImGui::SetNextWindowPos(ImVec2(x, y));
  ImGui::SetNextWindowSize(ImVec2(w, h));
  ImGui::Begin("Timeline", nullptr, kFixed);
  const int64_t n = available_steps();
  if (ImGui::Button(timeline_.playing ? "Pause" : "Play")) {
    timeline_.pinned = -1;
    timeline_.follow = false;
    timeline_.playing = !timeline_.playing;
    if (timeline_.playing && timeline_.step >= n - 1) timeline_.position = 0;
  }
  ImGui::SameLine();
  if (ImGui::Checkbox("Follow", &timeline_.follow) && timeline_.follow) {
    timeline_.playing = false;
    timeline_.pinned = -1;
  }
  ImGui::SameLine();
  int step = static_cast<int>(timeline_.step) + 1;  // shown 1-based, as in the lane titles
  ImGui::SetNextItemWidth(w - 200);
  if (ImGui::SliderInt("Step", &step, 1, static_cast<int>(std::max<int64_t>(1, n)))) {
    timeline_.pinned = -1;
    timeline_.follow = false;
    timeline_.playing = false;
    timeline_.step = step - 1;
  }

  if (ImGui::BeginTable("stats", 9, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    for (const char* c : {"run", "state", "step", "NFE", "tokens", "tokens/forward", "acceptance", "ms/step (last)",
                          "device ms"})
      ImGui::TableSetupColumn(c);
    ImGui::TableHeadersRow();
    for (const LaneView& l : lanes_) {
      const RunStats s = run_stats(l.frames, static_cast<size_t>(timeline_.step), l.record->tokens());
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(l.label.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(state_name(l.record->state()));
      ImGui::TableNextColumn();
      ImGui::Text("%lld/%zu", static_cast<long long>(s.steps), l.frames.size());
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(s.nfe));
      ImGui::TableNextColumn();
      ImGui::Text("%lld/%lld", static_cast<long long>(s.committed), static_cast<long long>(s.tokens));
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", s.accepted_length);
      ImGui::TableNextColumn();
      if (s.acceptance_rate >= 0) ImGui::Text("%.1f%%", 100.0 * s.acceptance_rate);
      else ImGui::TextUnformatted("-");
      ImGui::TableNextColumn();
      ImGui::Text("%.1f (%.1f)", s.mean_step_ms, s.last_step_ms);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", s.device_ms);
    }
    ImGui::EndTable();
  }
  // Tokens committed per step, one plot per run.
  const float plot_w = (w - 20 - 8 * static_cast<float>(lanes_.size())) / static_cast<float>(std::max<size_t>(1, lanes_.size()));
  for (size_t i = 0; i < lanes_.size(); ++i) {
    const LaneView& l = lanes_[i];
    std::vector<float> per_step;
    int64_t prev = 0;
    for (const auto& f : l.frames) {
      per_step.push_back(static_cast<float>(f->event.committed - prev));
      prev = f->event.committed;
    }
    if (i) ImGui::SameLine();
    const std::string label = "##commits" + std::to_string(i);
    ImGui::PlotHistogram(label.c_str(), per_step.data(), static_cast<int>(per_step.size()), 0,
                         (l.record->method() + ": tokens per step").c_str(), 0.0f, FLT_MAX,
                         ImVec2(plot_w, std::max(30.0f, ImGui::GetContentRegionAvail().y - 4)));
  }
  ImGui::End();
}

void App::build_kiosk_caption(float x, float y, float w, float h) {
  ImGui::SetNextWindowPos(ImVec2(x, y));
  ImGui::SetNextWindowSize(ImVec2(w, h));
  ImGui::Begin("##caption", nullptr, kFixed | ImGuiWindowFlags_NoDecoration);
  if (lanes_.empty()) {
    ImGui::End();
    return;
  }
  const LaneView& a = lanes_.front();
  ImGui::SetWindowFontScale(2.0f);
  std::string title = a.record->method();
  if (lanes_.size() > 1) title += " vs " + lanes_[1].record->method();
  title += "  class " + std::to_string(a.record->class_id()) + ", seed " + std::to_string(a.record->seed());
  ImGui::TextUnformatted(title.c_str());
  ImGui::SetWindowFontScale(1.6f);
  ImGui::TextWrapped("%s.", method_summary(a.record->method()).c_str());
  std::string status;
  bool failed = false;
  for (const LaneView& l : lanes_) {
    const RunStats s = run_stats(l.frames, l.frames.empty() ? 0 : l.frames.size() - 1, l.record->tokens());
    if (l.record->state() == RunState::Failed) {
      failed = true;
      status = "Something went wrong (" + l.record->error() + "). Starting the next image...";
      break;
    }
    char buf[200];
    std::snprintf(buf, sizeof(buf), "%s%s: %lld/%lld tokens in %lld forwards (%.2f per forward)",
                  status.empty() ? "" : "   ", l.record->method().c_str(), static_cast<long long>(s.committed),
                  static_cast<long long>(s.tokens), static_cast<long long>(s.nfe), s.accepted_length);
    status += buf;
  }
  const bool ended = std::all_of(lanes_.begin(), lanes_.end(), [](const LaneView& l) { return l.record->ended(); });
  if (!failed && ended && lanes_.size() > 1 && !lanes_[0].frames.empty() && !lanes_[1].frames.empty()) {
    const double a_nfe = static_cast<double>(lanes_[0].frames.back()->event.nfe);
    const double b_nfe = static_cast<double>(lanes_[1].frames.back()->event.nfe);
    if (a_nfe > 0) {
      char buf[160];
      std::snprintf(buf, sizeof(buf), "   -> %.1fx fewer forward passes than %s", b_nfe / a_nfe,
                    lanes_[1].record->method().c_str());
      status += buf;
    }
  }
  ImGui::TextColored(failed ? ImVec4(1, 0.45f, 0.4f, 1) : ImVec4(0.85f, 0.9f, 1, 1), "%s", status.c_str());
  ImGui::End();
}

}  // namespace vkspec::viewer
