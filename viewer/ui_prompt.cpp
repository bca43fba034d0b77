// The prompt box of a prompt-driven model (Janus-Pro): in the run panel where a class model has
// its Class slider, and in the kiosk's caption for visitors. Enter (or Generate) only asks for a
// start: the prompt becomes a condition between frames, and its error shows as a message.
#include "viewer/kiosk_prompts.h"
#include "viewer/ui.h"
#include "viewer/ui_widgets.h"

namespace vkspec::viewer {

void Ui::build_prompt_box() {
  ImGui::Text("Prompt");
  ImGui::SetNextItemWidth(-1.0f);
  if (ImGui::InputTextWithHint("##prompt", example_prompts().front().c_str(), controls_.prompt,
                               sizeof(controls_.prompt), ImGuiInputTextFlags_EnterReturnsTrue))
    start_requested_ = true;
}

void Ui::build_kiosk_prompt_box() {
  ImGui::SetNextItemWidth(-1.0f);
  // The box keeps the keyboard: a visitor types without clicking into it first, and again after
  // each Enter (which leaves the box).
  if (!ImGui::IsAnyItemActive()) ImGui::SetKeyboardFocusHere();
  if (ImGui::InputTextWithHint("##visitor", "Type a prompt and press Enter", controls_.prompt, sizeof(controls_.prompt),
                               ImGuiInputTextFlags_EnterReturnsTrue))
    start_requested_ = true;
  if (!error_.empty()) widgets::wrapped(ImVec4(1, 0.45f, 0.4f, 1), error_);
}

}  // namespace vkspec::viewer
