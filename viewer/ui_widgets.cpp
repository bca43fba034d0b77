#include "viewer/ui_widgets.h"

namespace vkspec::viewer::widgets {

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

}  // namespace vkspec::viewer::widgets
