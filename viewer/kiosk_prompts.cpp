#include "viewer/kiosk_prompts.h"

#include <fstream>

#include "common/error.h"

namespace vkspec::viewer {

const std::vector<std::string>& example_prompts() {
  // Fashion-MNIST's garments: what the shipped-size test models and a Janus-Pro both can draw.
  static const std::vector<std::string> examples = {"an ankle boot", "a pair of trousers",
                                                    "a handbag",     "a pullover with long sleeves",
                                                    "a sneaker",     "a summer dress"};
  return examples;
}

std::vector<std::string> read_prompt_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Error("--kiosk-prompts " + path + ": cannot be read");
  std::vector<std::string> prompts;
  const char* space = " \t\r\n\f\v";
  for (std::string line; std::getline(f, line);) {
    const size_t first = line.find_first_not_of(space);
    if (first == std::string::npos) continue;
    prompts.push_back(line.substr(first, line.find_last_not_of(space) - first + 1));
  }
  if (f.bad()) throw Error("--kiosk-prompts " + path + ": read error");
  if (prompts.empty()) throw Error("--kiosk-prompts " + path + ": no prompt in it (one a line)");
  return prompts;
}

std::vector<std::string> kiosk_prompts(const std::string& path) {
  return path.empty() ? example_prompts() : read_prompt_file(path);
}

}  // namespace vkspec::viewer
