#include "cli/prompt_list.h"

#include <fstream>

#include "common/error.h"
#include "eval/sample_set.h"

namespace vkspec::cli {
namespace {

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

}  // namespace

PromptList read_prompt_list(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read the prompts file");
  PromptList list;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line.size() > (1u << 16)) throw Error(where + ": a prompt over 64 KiB");
    if (!valid_utf8(line)) throw Error(where + ": not UTF-8 text");
    int64_t cls = -1;
    const size_t tab = line.find('\t');
    if (tab != std::string::npos && tab > 0 && line.find_first_not_of("0123456789") == tab) {
      if (tab > 9) throw Error(where + ": class " + line.substr(0, tab) + " is implausibly large");
      cls = std::stoll(line.substr(0, tab));
      line = line.substr(tab + 1);
      if (line.find_first_not_of(" \t") == std::string::npos) throw Error(where + ": a class without a prompt");
    }
    list.texts.push_back(line);
    list.classes.push_back(cls);
  }
  if (list.texts.empty()) throw Error(path + ": no prompt in the prompts file");
  list.identity = file_identity(path);
  return list;
}

}  // namespace vkspec::cli
