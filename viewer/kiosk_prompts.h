#pragma once
// The prompts a kiosk cycles for a prompt-driven model (Janus-Pro) while no visitor types one:
// a few built-in examples, or a file of one prompt a line (--kiosk-prompts).
#include <string>
#include <vector>

namespace vkspec::viewer {

const std::vector<std::string>& example_prompts();

// The non-blank lines of `path`, trimmed (a CRLF file reads the same). Throws Error naming the file
// when it cannot be read or holds no prompt.
std::vector<std::string> read_prompt_file(const std::string& path);

// `path`'s prompts, or the examples for "".
std::vector<std::string> kiosk_prompts(const std::string& path);

}  // namespace vkspec::viewer
