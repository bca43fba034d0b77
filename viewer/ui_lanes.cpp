// The canvases with their race bars (how far each run is, in how many target forwards) and the
// kiosk's caption under them.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "viewer/method_info.h"
#include "viewer/run_stats.h"
#include "viewer/ui.h"
#include "viewer/ui_widgets.h"

namespace vkspec::viewer {

std::string Ui::lane_title(const LaneView& l) const {
  char buf[512];
  const size_t steps = l.frames.size();
  std::snprintf(buf, sizeof(buf), "%s  %s, seed %llu  step %zu/%zu%s", l.label.c_str(),
                l.record->condition().text(40).c_str(), static_cast<unsigned long long>(l.record->seed()),
                steps ? l.shown_step + 1 : 0, steps, l.record->ended() ? "" : "+");
  std::string title = buf;
  if (l.shown_step < steps) {  // the shown step's draft tree (adaptive-tree, vvs --tree adaptive)
    const StepEvent& e = l.frames[l.shown_step]->event;
    if (e.tree_depth > 0) title += "  tree " + std::to_string(e.tree_depth) + "x" + std::to_string(e.tree_width);
    if (!e.verified) title += "  unverified";
  }
  return title;
}

// The hovered cell's committing step, where the tree or unverified overlay has something to say,
// and its head weight where the gate overlay has one.
void Ui::cell_tooltip(const LaneView& l, int64_t grid) const {
  if (grid <= 0 || !ImGui::IsWindowHovered() || !ImGui::IsMouseHoveringRect(l.p0, l.p1)) return;
  const ImVec2 m = ImGui::GetIO().MousePos;
  const float cell = (l.p1.x - l.p0.x) / static_cast<float>(grid);
  const int64_t col = std::clamp<int64_t>(static_cast<int64_t>((m.x - l.p0.x) / cell), 0, grid - 1);
  const int64_t row = std::clamp<int64_t>(static_cast<int64_t>((m.y - l.p0.y) / cell), 0, grid - 1);
  const size_t c = static_cast<size_t>(row * grid + col);
  const StepEvent* e = nullptr;
  size_t step = 0;
  if (c < l.cells.commit_step.size() && l.cells.commit_step[c] >= 0) {
    step = static_cast<size_t>(l.cells.commit_step[c]);
    if (step < l.frames.size()) e = &l.frames[step]->event;
  }
  const bool tree = e && overlays_.on(kShowTree) && e->tree_depth > 0;
  const bool unverified = e && overlays_.on(kShowUnverified) && !e->verified;
  const uint8_t gate = c * 4 < l.cells.tree_texels.size() ? l.cells.gate(static_cast<int32_t>(c)) : 0;
  const bool gated = overlays_.on(kShowGate) && gate != 0;
  if (!tree && !unverified && !gated) return;
  ImGui::BeginTooltip();
  if (e)
    ImGui::Text("cell %lld,%lld committed at step %zu", static_cast<long long>(row), static_cast<long long>(col),
                step + 1);  // 1-based, as in the titles
  else
    ImGui::Text("cell %lld,%lld", static_cast<long long>(row), static_cast<long long>(col));
  if (tree) ImGui::Text("draft tree: depth %d x width %d", e->tree_depth, e->tree_width);
  if (unverified) ImGui::TextUnformatted("committed without a target forward verifying it");
  if (gated)
    ImGui::Text("weight of the horizontal head: %.2f (vertical %.2f)", (gate - 1) / 254.0, (255 - gate) / 254.0);
  ImGui::EndTooltip();
}

void Ui::build_canvas_area(float x, float y, float w, float h, float scale) {
  ImGui::SetNextWindowPos(ImVec2(x, y));
  ImGui::SetNextWindowSize(ImVec2(w, h));
  ImGui::Begin("##canvases", nullptr, widgets::kBare);
  ImGui::SetWindowFontScale(scale);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  std::vector<LaneView>& lanes = runs_.lanes();
  const int64_t grid = models_.grid();
  const size_t n = std::max<size_t>(1, lanes.size());
  const float pad = 10, line = ImGui::GetTextLineHeightWithSpacing(), bar = line + 4;
  const float colw = (w - pad * static_cast<float>(n + 1)) / static_cast<float>(n);
  const float side = std::max(16.0f, std::min(colw, h - line - bar - pad * 3));
  for (size_t i = 0; i < lanes.size(); ++i) {
    LaneView& l = lanes[i];
    const float cx = x + pad + static_cast<float>(i) * (colw + pad);
    ImGui::SetCursorScreenPos(ImVec2(cx, y + pad));
    ImGui::TextUnformatted(lane_title(l).c_str());
    l.p0 = ImVec2(std::floor(cx + (colw - side) / 2), std::floor(y + pad + line));
    l.p1 = ImVec2(l.p0.x + std::floor(side), l.p0.y + std::floor(side));
    l.canvas->draw(dl, l.p0, l.p1, overlays_);
    if (overlays_.on(kShowIslands) && grid > 0) {
      const float cell = (l.p1.x - l.p0.x) / static_cast<float>(grid);
      for (const IslandLabel& il : l.cells.islands) {
        const auto c = island_colour(il.id);
        const ImVec2 at(l.p0.x + static_cast<float>(il.anchor % grid) * cell + 2,
                        l.p0.y + static_cast<float>(il.anchor / grid) * cell + 1);
        const std::string text = "#" + std::to_string(il.id);
        const ImVec2 size = ImGui::CalcTextSize(text.c_str());
        dl->AddRectFilled(at, ImVec2(at.x + size.x + 2, at.y + size.y), IM_COL32(0, 0, 0, 190));
        dl->AddText(ImVec2(at.x + 1, at.y), ImGui::GetColorU32(ImVec4(c[0], c[1], c[2], 1)), text.c_str());
      }
    }
    cell_tooltip(l, grid);
    const RunStats s = run_stats(l.frames, l.shown_step == SIZE_MAX ? 0 : l.shown_step, l.record->tokens());
    char text[160];
    if (l.record->state() == RunState::Failed)
      std::snprintf(text, sizeof(text), "failed");
    else
      std::snprintf(text, sizeof(text), "NFE %lld   %lld/%lld tokens   %.2f per forward", static_cast<long long>(s.nfe),
                    static_cast<long long>(s.committed), static_cast<long long>(s.tokens), s.accepted_length);
    ImGui::SetCursorScreenPos(ImVec2(l.p0.x, l.p1.y + pad / 2));
    ImGui::ProgressBar(s.tokens ? static_cast<float>(s.committed) / static_cast<float>(s.tokens) : 0.0f,
                       ImVec2(l.p1.x - l.p0.x, bar), text);
  }
  ImGui::End();
}

void Ui::build_kiosk_caption(float x, float y, float w, float h) {
  ImGui::SetNextWindowPos(ImVec2(x, y));
  ImGui::SetNextWindowSize(ImVec2(w, h));
  ImGui::Begin("##caption", nullptr, widgets::kFixed | ImGuiWindowFlags_NoDecoration);
  const std::vector<LaneView>& lanes = runs_.lanes();
  if (models_.takes_prompt()) {
    ImGui::SetWindowFontScale(1.6f);
    build_kiosk_prompt_box();
  }
  if (lanes.empty()) {
    ImGui::End();
    return;
  }
  const LaneView& a = lanes.front();
  ImGui::SetWindowFontScale(2.0f);
  std::string title = a.record->method();
  if (lanes.size() > 1) title += " vs " + lanes[1].record->method();
  title += "  " + a.record->condition().text(80) + ", seed " + std::to_string(a.record->seed());
  ImGui::TextUnformatted(title.c_str());
  ImGui::SetWindowFontScale(1.6f);
  ImGui::TextWrapped("%s.", method_summary(a.record->method()).c_str());
  std::string status;
  bool failed = false;
  for (const LaneView& l : lanes) {
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
  if (!failed && runs_.ended() && lanes.size() > 1 && !lanes[0].frames.empty() && !lanes[1].frames.empty()) {
    const double a_nfe = static_cast<double>(lanes[0].frames.back()->event.nfe);
    const double b_nfe = static_cast<double>(lanes[1].frames.back()->event.nfe);
    if (a_nfe > 0) {
      char buf[160];
      std::snprintf(buf, sizeof(buf), "   -> %.1fx fewer forward passes than %s", b_nfe / a_nfe,
                    lanes[1].record->method().c_str());
      status += buf;
    }
  }
  ImGui::TextColored(failed ? ImVec4(1, 0.45f, 0.4f, 1) : ImVec4(0.85f, 0.9f, 1, 1), "%s", status.c_str());
  ImGui::End();
}

}  // namespace vkspec::viewer
