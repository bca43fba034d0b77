#pragma once
// Window flags and small widgets the viewer's panels share.
#include <string>
#include <vector>

#include <imgui.h>

#include "viewer/run_record.h"

namespace vkspec::viewer::widgets {

constexpr ImGuiWindowFlags kFixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                    ImGuiWindowFlags_NoSavedSettings;
constexpr ImGuiWindowFlags kBare =
    kFixed | ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_NoBringToFrontOnFocus;

const char* state_name(RunState s);
void wrapped(const ImVec4& colour, const std::string& text);
// A combo box over `items`; true when the user picked one.
bool combo_of(const char* label, int* index, const std::vector<std::string>& items);

}  // namespace vkspec::viewer::widgets
