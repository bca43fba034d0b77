// A main() for the fuzz targets when libFuzzer is not there (the test suite, any compiler):
// replays every file of the corpus directories given, then mutates them for a time budget with
// a fixed seed (bit flips, byte changes, inserts, deletes, splices), calling the target on each.
//   fuzz_safetensors_replay [--seconds S] [--seed N] corpus_dir...
// Exit 0 when every input was handled; a crash or an escaping exception ends the process first.
#include <dirent.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"

int main(int argc, char** argv) {
  double seconds = 3;
  uint64_t seed = 1;
  std::vector<std::vector<uint8_t>> corpus;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      DIR* d = opendir(argv[i]);
      if (!d) {
        std::fprintf(stderr, "fuzz driver: cannot open corpus directory %s\n", argv[i]);
        return 2;
      }
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream f(std::string(argv[i]) + "/" + e->d_name, std::ios::binary);
        corpus.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      }
      closedir(d);
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "fuzz driver: empty corpus\n");
    return 2;
  }
  for (const auto& c : corpus) LLVMFuzzerTestOneInput(c.data(), c.size());
  std::mt19937_64 rng(seed);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  uint64_t runs = corpus.size();
  while (std::chrono::steady_clock::now() < end) {
    std::vector<uint8_t> x = corpus[rng() % corpus.size()];
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < edits; ++k) {
      const size_t at = x.empty() ? 0 : rng() % x.size();
      switch (rng() % 6) {
        case 0:
          if (!x.empty()) x[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
          break;
        case 1:
          if (!x.empty()) x[at] = static_cast<uint8_t>(rng());
          break;
        case 2: x.insert(x.begin() + static_cast<long>(at), static_cast<uint8_t>(rng())); break;
        case 3:
          if (!x.empty()) x.erase(x.begin() + static_cast<long>(at));
          break;
        case 4: {  // splice a piece of another input
          const auto& o = corpus[rng() % corpus.size()];
          if (!o.empty()) {
            const size_t from = rng() % o.size(), n = 1 + rng() % std::min<size_t>(o.size() - from, 64);
            x.insert(x.begin() + static_cast<long>(at), o.begin() + static_cast<long>(from),
                     o.begin() + static_cast<long>(from + n));
          }
          break;
        }
        default:  // interesting numbers in place
          if (x.size() >= at + 8) {
            const uint64_t v[] = {0, 1, 0xFFFFFFFFull, 0x7FFFFFFFFFFFFFFFull, ~0ull, 1ull << 32};
            std::memcpy(x.data() + at, &v[rng() % 6], 8);
          }
      }
    }
    LLVMFuzzerTestOneInput(x.data(), x.size());
    ++runs;
  }
  std::printf("fuzz driver: %llu inputs, no crash\n", static_cast<unsigned long long>(runs));
  return 0;
}
