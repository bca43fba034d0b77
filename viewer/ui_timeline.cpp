// The timeline: play/pause, follow, the step slider, a statistics row per run and a plot of the
// tokens each run committed per step.
#include <algorithm>
#include <cfloat>

#include "viewer/run_stats.h"
#include "viewer/ui.h"
#include "viewer/ui_widgets.h"

namespace vkspec::viewer {

void Ui::build_timeline_panel(float x, float y, float w, float h) {
  ImGui::SetNextWindowPos(ImVec2(x, y));
  ImGui::SetNextWindowSize(ImVec2(w, h));
  ImGui::Begin("Timeline", nullptr, widgets::kFixed);
  Timeline& t = runs_.timeline();
  const std::vector<LaneView>& lanes = runs_.lanes();
  const int64_t n = runs_.available_steps();
  if (ImGui::Button(t.playing ? "Pause" : "Play")) t.toggle_play(n);
  ImGui::SameLine();
  bool follow = t.follow;
  if (ImGui::Checkbox("Follow", &follow)) {
    if (follow)
      t.set_follow();
    else
      t.follow = false;
  }
  ImGui::SameLine();
  int step = static_cast<int>(t.step) + 1;  // shown 1-based, as in the lane titles
  ImGui::SetNextItemWidth(w - 200);
  if (ImGui::SliderInt("Step", &step, 1, static_cast<int>(std::max<int64_t>(1, n)))) t.go_to(step - 1, n);

  if (ImGui::BeginTable("stats", 9,
                        ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
    for (const char* c :
         {"run", "state", "step", "NFE", "tokens", "tokens/forward", "acceptance", "ms/step (last)", "device ms"})
      ImGui::TableSetupColumn(c);
    ImGui::TableHeadersRow();
    for (const LaneView& l : lanes) {
      const RunStats s = run_stats(l.frames, static_cast<size_t>(t.step), l.record->tokens());
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(l.label.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(widgets::state_name(l.record->state()));
      ImGui::TableNextColumn();
      ImGui::Text("%lld/%zu", static_cast<long long>(s.steps), l.frames.size());
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(s.nfe));
      ImGui::TableNextColumn();
      ImGui::Text("%lld/%lld", static_cast<long long>(s.committed), static_cast<long long>(s.tokens));
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", s.accepted_length);
      ImGui::TableNextColumn();
      if (s.acceptance_rate >= 0)
        ImGui::Text("%.1f%%", 100.0 * s.acceptance_rate);
      else
        ImGui::TextUnformatted("-");
      ImGui::TableNextColumn();
      ImGui::Text("%.1f (%.1f)", s.mean_step_ms, s.last_step_ms);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", s.device_ms);
    }
    ImGui::EndTable();
  }
  const float plot_w =
      (w - 20 - 8 * static_cast<float>(lanes.size())) / static_cast<float>(std::max<size_t>(1, lanes.size()));
  for (size_t i = 0; i < lanes.size(); ++i) {
    const LaneView& l = lanes[i];
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

}  // namespace vkspec::viewer
