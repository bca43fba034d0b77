// vkspec-viewer: watch an image form step by step, with accepted, rejected and resampled tokens and
// rejection islands overlaid; replay traces; run unattended as a kiosk.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <thread>

#include "viewer/app.h"

int main(int argc, char** argv) {
  using namespace vkspec::viewer;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (const std::string& a : args)
    if (a == "--help" || a == "-h") {
      std::fputs(kViewerUsage, stdout);
      return 0;
    }
  ViewerOptions options;
  try {
    options = parse_viewer_options(args);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n\n" << kViewerUsage;
    return 2;
  }
  // SIGINT / SIGTERM end the frame loop: the viewer (and a kiosk) stops cleanly, writing what it
  // records.
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  try {
    GlfwLibrary glfw;
    int64_t kiosk_run = 0;
    if (!options.kiosk) {
      App app(options, glfw, kiosk_run);
      return app.run();
    }
    // The kiosk never gives up once it has shown something: any error restarts the viewer (new
    // device, new window) and it goes on with the next run. A viewer that cannot start at all is a
    // configuration problem and exits.
    bool started_once = false;
    double backoff_s = 1;
    for (;;) {
      try {
        App app(options, glfw, kiosk_run);
        started_once = true;
        backoff_s = 1;
        return app.run();
      } catch (const std::exception& e) {
        if (!started_once || stop_requested()) throw;
        std::cerr << "vkspec-viewer: kiosk: " << e.what() << "; restarting in " << backoff_s << " s\n";
        std::this_thread::sleep_for(std::chrono::duration<double>(backoff_s));
        backoff_s = std::min(backoff_s * 2, 30.0);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "vkspec-viewer: error: " << e.what() << "\n";
    return 1;
  }
}
