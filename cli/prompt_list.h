#pragma once
// An evaluation set of prompts for a prompt-driven model (`vkspec bench --prompts FILE`): one
// prompt per line, blank lines skipped; a line "N<TAB>text" also gives the class a classifier
// should see (class accuracy, as class-conditional runs have it). Image with seed s takes prompt
// s mod the count, as it would take class s mod the classes, so every split of a seed range over
// commands, shards or devices draws the same prompts.
#include <cstdint>
#include <string>
#include <vector>

namespace vkspec::cli {

struct PromptList {
  std::vector<std::string> texts;
  std::vector<int64_t> classes;  // per prompt; -1 where the line gives none
  std::string identity;          // "NAME#HASH" (eval's file_identity): what sample files record

  const std::string& text_for(uint64_t seed) const { return texts[seed % texts.size()]; }
  int64_t class_for(uint64_t seed) const { return classes[seed % classes.size()]; }
};

// Throws Error naming the file and line: unreadable, no prompt, invalid UTF-8, a line over 64 KiB,
// a class that is not a non-negative integer.
PromptList read_prompt_list(const std::string& path);

}  // namespace vkspec::cli
