#pragma once
// Running vkspec-viewer from a test: under xvfb-run (VKSPEC_XVFB_RUN, "" when the build found
// none) with its output captured, and the PNGs it saves read back.
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include <stb/stb_image.h>

namespace vkspec::viewer::xvfb {

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The command's exit code (-1 when it did not exit), its stdout and stderr appended to `output`.
inline int run(const std::string& cmd, std::string* output) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) *output += buf;
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The viewer under a 1280x720 X server with `args`, at 15 frames per second.
inline std::string viewer_command(const std::string& xvfb_run, const std::string& viewer, const std::string& args) {
  return xvfb_run + " -a -s '-screen 0 1280x720x24' " + viewer + " --fps 15 --timeout 900 " + args;
}

struct Rgb {
  int r, g, b;
};

struct Png {
  int w = 0, h = 0;
  std::vector<uint8_t> rgb;
  Rgb at(int x, int y) const {
    const size_t i = (static_cast<size_t>(y) * w + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

// Empty (w == 0) when the file is missing or unreadable. Needs STB_IMAGE_IMPLEMENTATION in one
// file of the test.
inline Png load_png(const std::string& path) {
  Png p;
  int n = 0;
  uint8_t* data = stbi_load(path.c_str(), &p.w, &p.h, &n, 3);
  if (!data) return p;
  p.rgb.assign(data, data + static_cast<size_t>(p.w) * p.h * 3);
  stbi_image_free(data);
  return p;
}

}  // namespace vkspec::viewer::xvfb
