// Runs vkspec-viewer under Xvfb on a fixed class and seed, pinned at one step, and checks the PNG it
// saves against the trace of the run it showed: the image region is not blank, the cells the step
// accepted, rejected and resampled carry the green, red and amber outlines and no other cell does
// (a rejected draft resampled in the same step keeps the red outline), undecided cells are dimmed,
// and replaying the saved trace draws the same image.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "decoding/strategy.h"
#include "decoding/trace_reader.h"
#include "tests/support/python_reference.h"

// stb_image's implementation, once in this program: xvfb_viewer.h reads the PNGs with it.
#define STB_IMAGE_IMPLEMENTATION
#include "viewer/tests/xvfb_viewer.h"

namespace vkspec {
namespace {

struct Case {
  const char* method;
  int64_t step;  // the step shown
  bool rejects;  // the step must reject something (so the red outline is checked)
};
// One line per method; a method that is not registered (strategy_names()) is skipped.
const Case kCases[] = {{"ar", 40, false}, {"scd-mc", 3, true}};

void PrintTo(const Case& c, std::ostream* os) { *os << c.method << " at step " << c.step; }

using viewer::xvfb::load_png;
using viewer::xvfb::Png;
using viewer::xvfb::quote;
using viewer::xvfb::Rgb;

// Overlay colours of viewer/shaders/canvas.frag as 8-bit UNORM values.
constexpr Rgb kAcceptedRgb{41, 219, 79};
constexpr Rgb kRejectedRgb{240, 46, 41};
constexpr Rgb kResampledRgb{255, 176, 0};

struct Region {
  double x, y, side;
  int64_t grid;
};

bool near(const Rgb& a, const Rgb& b, int tol = 4) {
  return std::abs(a.r - b.r) <= tol && std::abs(a.g - b.g) <= tol && std::abs(a.b - b.b) <= tol;
}

// Fraction of the pixels on a cell's outline band (inset by half the outline width, corners left
// out) that have colour c.
double outline_match(const Png& png, const Region& r, int64_t cell, const Rgb& c) {
  const double cs = r.side / static_cast<double>(r.grid);
  const double bw = std::clamp(cs / 10.0, 1.0, 4.0);
  const double x0 = r.x + static_cast<double>(cell % r.grid) * cs, y0 = r.y + static_cast<double>(cell / r.grid) * cs;
  int hits = 0, total = 0;
  for (double t = 0.3; t <= 0.7; t += 0.4 / 8) {
    const int along_x = static_cast<int>(x0 + t * cs), along_y = static_cast<int>(y0 + t * cs);
    const int in = static_cast<int>(bw / 2);
    const int pts[4][2] = {{along_x, static_cast<int>(y0) + in},
                           {along_x, static_cast<int>(y0 + cs) - 1 - in},
                           {static_cast<int>(x0) + in, along_y},
                           {static_cast<int>(x0 + cs) - 1 - in, along_y}};
    for (const auto& p : pts) {
      hits += near(png.at(p[0], p[1]), c);
      ++total;
    }
  }
  return static_cast<double>(hits) / total;
}

// The brightest channel value inside a cell, away from its outline.
int interior_max(const Png& png, const Region& r, int64_t cell) {
  const double cs = r.side / static_cast<double>(r.grid);
  const double x0 = r.x + static_cast<double>(cell % r.grid) * cs, y0 = r.y + static_cast<double>(cell / r.grid) * cs;
  int m = 0;
  for (int y = static_cast<int>(y0 + cs * 0.25); y < static_cast<int>(y0 + cs * 0.75); ++y)
    for (int x = static_cast<int>(x0 + cs * 0.25); x < static_cast<int>(x0 + cs * 0.75); ++x) {
      const Rgb p = png.at(x, y);
      m = std::max({m, p.r, p.g, p.b});
    }
  return m;
}

class ViewerScreenshot : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::scratch_dir("viewer_screenshot");
    gpt_ = dir_ + "/gpt.safetensors";
    vq_ = dir_ + "/vq.safetensors";
    const auto g = testing::run_reference({"make-gpt", gpt_, "--vocab", "16", "--grid", "16", "--classes", "10",
                                           "--dim", "64", "--heads", "2", "--layers", "1"});
    const auto v = testing::run_reference({"make-vq", vq_, "--codebook", "16", "--ch-mult", "1,2"});
    models_skipped_ = g.skipped || v.skipped;
    models_error_ = !g.ok && !g.skipped ? g.message : (!v.ok && !v.skipped ? v.message : "");
  }
  void SetUp() override {
    if (std::string(VKSPEC_XVFB_RUN).empty())
      GTEST_SKIP() << "xvfb-run not found (apt-get install xvfb xauth): the viewer needs an X display";
    if (models_skipped_) GTEST_SKIP() << "PyTorch missing: cannot make the test models (tools/reference.py)";
    ASSERT_TRUE(models_error_.empty()) << models_error_;
  }
  // Runs the viewer under Xvfb with `args`; fails the test on a non-zero exit.
  void viewer(const std::string& args) {
    const std::string cmd = viewer::xvfb::viewer_command(VKSPEC_XVFB_RUN, VKSPEC_VIEWER_BIN, args);
    std::string out;
    const int code = viewer::xvfb::run(cmd, &out);
    ASSERT_EQ(code, 0) << cmd << "\n" << out;
    std::fprintf(stderr, "%s", out.c_str());
  }
  // Writes one synthetic run of a G x G grid (16 codes) as dir_/NAME.trace.json; returns dir_/NAME.
  static std::string write_synthetic_trace(const std::string& name, int64_t G, const Generation& g) {
    TraceConfig tc;
    tc.model = "synthetic";
    tc.grid_size = G;
    tc.vocab_size = 16;
    const std::string stem = dir_ + "/" + name;
    write_trace(stem + ".trace.json", tc, {g});
    return stem;
  }
  static std::string dir_, gpt_, vq_, models_error_;
  static bool models_skipped_;
};
std::string ViewerScreenshot::dir_, ViewerScreenshot::gpt_, ViewerScreenshot::vq_, ViewerScreenshot::models_error_;
bool ViewerScreenshot::models_skipped_ = false;

TEST_P(ViewerScreenshot, OverlaysMatchTheTrace) {
  const Case c = GetParam();
  const auto names = strategy_names();
  if (std::find(names.begin(), names.end(), c.method) == names.end())
    GTEST_SKIP() << "method " << c.method << " is not registered in this build";
  const std::string stem = dir_ + "/" + c.method;
  const std::string common = " --class 3 --seed 2 --step " + std::to_string(c.step) + " --frames 5";
  viewer("--model " + quote(gpt_) + " --vq " + quote(vq_) + " --method " + c.method + common + " --screenshot " +
         quote(stem + ".png") + " --layout " + quote(stem + ".layout.json") + " --save-trace " +
         quote(stem + ".trace.json"));
  if (HasFatalFailure()) return;

  const Trace trace = read_trace(stem + ".trace.json");
  ASSERT_EQ(trace.images.size(), 1u);
  const Generation& g = trace.images[0];
  ASSERT_GT(static_cast<int64_t>(g.events.size()), c.step) << "the run has fewer steps than the one to show";
  const StepEvent& e = g.events[static_cast<size_t>(c.step)];
  ASSERT_FALSE(e.accepted.empty()) << "step " << c.step << " accepts nothing: pick another step";
  if (c.rejects) {
    ASSERT_FALSE(e.rejected.empty()) << c.method << " rejects nothing at step " << c.step << ": pick another step";
  }
  GridReplay replay(g.tokens);
  for (int64_t i = 0; i <= c.step; ++i) replay.apply(g.events[static_cast<size_t>(i)]);

  std::ifstream lf(stem + ".layout.json");
  const nlohmann::json layout = nlohmann::json::parse(lf);
  ASSERT_EQ(layout["lanes"].size(), 1u);
  const auto& lane = layout["lanes"][0];
  EXPECT_EQ(lane["step"].get<int64_t>(), c.step);
  EXPECT_EQ(lane["method"].get<std::string>(), c.method);
  const Region r{lane["x"].get<double>(), lane["y"].get<double>(), lane["w"].get<double>(),
                 lane["grid"].get<int64_t>()};
  ASSERT_EQ(r.grid, trace.config.grid_size);

  const Png png = load_png(stem + ".png");
  ASSERT_EQ(png.w, 1280) << stem << ".png missing or unreadable";
  ASSERT_EQ(png.h, 720);
  ASSERT_LE(r.x + r.side, png.w);
  ASSERT_LE(r.y + r.side, png.h);

  // Not blank: the image region varies.
  double sum = 0, sum2 = 0;
  int n = 0;
  for (int y = static_cast<int>(r.y); y < static_cast<int>(r.y + r.side); y += 3)
    for (int x = static_cast<int>(r.x); x < static_cast<int>(r.x + r.side); x += 3) {
      const Rgb p = png.at(x, y);
      const double l = (p.r + p.g + p.b) / 3.0;
      sum += l, sum2 += l * l, ++n;
    }
  const double mean = sum / n, stddev = std::sqrt(std::max(0.0, sum2 / n - mean * mean));
  EXPECT_GT(stddev, 10.0) << "the image region looks blank (mean " << mean << ")";

  const int64_t T = r.grid * r.grid;
  auto listed = [](const std::vector<int32_t>& v, int64_t cell) {
    return std::find(v.begin(), v.end(), static_cast<int32_t>(cell)) != v.end();
  };
  int64_t undecided_checked = 0;
  for (int64_t cell = 0; cell < T; ++cell) {
    const double green = outline_match(png, r, cell, kAcceptedRgb), red = outline_match(png, r, cell, kRejectedRgb);
    if (listed(e.accepted, cell)) {
      EXPECT_GE(green, 0.9) << "accepted cell " << cell << " lacks the green outline";
    } else {
      EXPECT_LE(green, 0.25) << "cell " << cell << " is outlined green but was not accepted at step " << c.step;
    }
    const double amber = outline_match(png, r, cell, kResampledRgb);
    const bool rejected = listed(e.rejected, cell) && !listed(e.accepted, cell);
    const bool resampled = listed(e.resampled, cell) && !rejected && !listed(e.accepted, cell);
    if (rejected) {
      EXPECT_GE(red, 0.9) << "rejected cell " << cell << " lacks the red outline";
    } else {
      EXPECT_LE(red, 0.25) << "cell " << cell << " is outlined red but was not rejected at step " << c.step;
    }
    if (resampled) {
      EXPECT_GE(amber, 0.9) << "resampled cell " << cell << " lacks the amber outline";
    } else {
      EXPECT_LE(amber, 0.25) << "cell " << cell << " is outlined amber but was not resampled";
    }
    if (replay.grid()[static_cast<size_t>(cell)] == kUndecided && !listed(e.proposed, cell)) {
      // Dimmed to 0.3 of at most 255 (plus rounding).
      EXPECT_LE(interior_max(png, r, cell), 78) << "undecided cell " << cell << " is not dimmed";
      ++undecided_checked;
    }
  }
  EXPECT_GT(undecided_checked, 0);

  // Replaying the saved trace (no model run) draws the same image at the same step.
  viewer("--trace " + quote(stem + ".trace.json") + " --vq " + quote(vq_) + common + " --screenshot " +
         quote(stem + ".replay.png") + " --layout " + quote(stem + ".replay.layout.json"));
  if (HasFatalFailure()) return;
  const Png replayed = load_png(stem + ".replay.png");
  ASSERT_EQ(replayed.w, png.w);
  std::ifstream rf(stem + ".replay.layout.json");
  const nlohmann::json rl = nlohmann::json::parse(rf);
  ASSERT_EQ(rl["lanes"][0]["x"].get<double>(), r.x);
  ASSERT_EQ(rl["lanes"][0]["w"].get<double>(), r.side);
  int64_t differ = 0;
  for (int y = static_cast<int>(r.y); y < static_cast<int>(r.y + r.side); ++y)
    for (int x = static_cast<int>(r.x); x < static_cast<int>(r.x + r.side); ++x)
      differ += !near(png.at(x, y), replayed.at(x, y), 0);
  EXPECT_EQ(differ, 0) << "the replay draws " << differ << " pixels differently from the live run";
}

// Fraction of pixels matching c along one side of a cell (0 left, 1 right, 2 top, 3 bottom), at
// depth `inset` pixels inside the cell, from 40% to 80% along the side (clear of the island's id
// label at the top-left corner).
double side_match(const Png& png, const Region& r, int64_t cell, int side, double inset, const Rgb& c) {
  const double cs = r.side / static_cast<double>(r.grid);
  const double x0 = r.x + static_cast<double>(cell % r.grid) * cs, y0 = r.y + static_cast<double>(cell / r.grid) * cs;
  int hits = 0, total = 0;
  for (double t = 0.4; t <= 0.8; t += 0.05) {
    double x = x0 + t * cs, y = y0 + t * cs;
    if (side == 0) x = x0 + inset;
    if (side == 1) x = x0 + cs - 1 - inset;
    if (side == 2) y = y0 + inset;
    if (side == 3) y = y0 + cs - 1 - inset;
    hits += near(png.at(static_cast<int>(x), static_cast<int>(y)), c);
    ++total;
  }
  return static_cast<double>(hits) / total;
}

// No method emits rejection islands yet (MuLo-SD will): a synthetic trace replayed with only the
// islands overlay on shows each island's outline in its colour (viewer/cell_overlay.cpp) exactly
// on the island's boundary.
TEST_F(ViewerScreenshot, IslandOutlinesFollowTheTrace) {
  const int64_t G = 8;
  Generation g;
  g.method = "islands";
  g.class_id = 1;
  for (int i = 0; i < G * G; ++i) g.tokens.push_back(i % 16);
  const std::vector<std::vector<int32_t>> islands = {{17, 18, 26, 27}, {36, 37}};
  auto in_island = [&](int32_t p) {
    for (size_t i = 0; i < islands.size(); ++i)
      if (std::find(islands[i].begin(), islands[i].end(), p) != islands[i].end()) return static_cast<int>(i);
    return -1;
  };
  StepEvent e0, e1, e2, e3;
  for (int32_t p = 0; p < 16; ++p) e0.accepted.push_back(p);
  e0.committed = 16;
  for (int32_t p = 16; p < 40; ++p) {
    e1.proposed.push_back(p);
    e1.proposed_tokens.push_back(p % 16);
    if (in_island(p) < 0) e1.accepted.push_back(p);
  }
  e1.rejected = {18, 27, 36};
  e1.islands = islands;
  e1.committed = 16 + static_cast<int64_t>(e1.accepted.size());
  for (const auto& isl : islands) e2.resampled.insert(e2.resampled.end(), isl.begin(), isl.end());
  e2.committed = 40;
  for (int32_t p = 40; p < G * G; ++p) e3.accepted.push_back(p);
  e3.committed = G * G;
  int64_t step = 0;
  for (StepEvent* e : {&e0, &e1, &e2, &e3}) {
    e->step = step++;
    e->nfe = step;
    g.events.push_back(*e);
  }
  g.nfe = 4;
  const std::string stem = write_synthetic_trace("islands", G, g);

  viewer("--trace " + quote(stem + ".trace.json") + " --step 1 --frames 3 --overlays islands --screenshot " +
         quote(stem + ".png") + " --layout " + quote(stem + ".layout.json"));
  if (HasFatalFailure()) return;
  std::ifstream lf(stem + ".layout.json");
  const nlohmann::json lane = nlohmann::json::parse(lf)["lanes"][0];
  const Region r{lane["x"].get<double>(), lane["y"].get<double>(), lane["w"].get<double>(), G};
  const Png png = load_png(stem + ".png");
  ASSERT_GT(png.w, 0);
  const double bw = std::clamp(r.side / G / 10.0, 1.0, 4.0);
  const Rgb colours[2] = {{255, 77, 255}, {51, 255, 255}};  // island_colour(0), island_colour(1)
  for (int32_t cell = 0; cell < G * G; ++cell) {
    const int id = in_island(cell);
    const int64_t x = cell % G, y = cell / G;
    const int64_t neighbour[4] = {x > 0 ? cell - 1 : -1, x + 1 < G ? cell + 1 : -1, y > 0 ? cell - G : -1,
                                  y + 1 < G ? cell + G : -1};
    for (int side = 0; side < 4; ++side) {
      const bool boundary = id >= 0 && (neighbour[side] < 0 || in_island(static_cast<int32_t>(neighbour[side])) != id);
      for (int k = 0; k < 2; ++k) {
        const double m = side_match(png, r, cell, side, bw, colours[k]);
        if (boundary && k == id) {
          EXPECT_GE(m, 0.9) << "island " << id << " cell " << cell << " side " << side << " lacks its outline";
        } else if (id < 0 || !boundary) {
          EXPECT_LE(m, 0.25) << "cell " << cell << " side " << side << " has island " << k << "'s colour";
        }
      }
    }
  }
}

// adaptive-tree's tree sizes and vvs's unverified rounds, in a synthetic trace replayed with the
// tree and unverified overlays on, against the same trace with no overlay: a cell committed by a
// step with a tree is tinted by its depth over the deepest (viewer/shaders/canvas.frag's
// tree_colour at heat_alpha 0.6), one committed unverified carries the chartreuse hatch inside, and
// one committed by a step with neither is drawn as without overlays.
TEST_F(ViewerScreenshot, TreeDepthAndUnverifiedCellsFollowTheTrace) {
  const int64_t G = 8;
  Generation g;
  g.method = "tree";
  g.class_id = 1;
  for (int i = 0; i < G * G; ++i) g.tokens.push_back((i * 7) % 16);
  // Four steps of 16 cells each: tree 2x3, unverified without a tree, tree 4x5, neither.
  StepEvent events[4];
  for (int s = 0; s < 4; ++s) {
    StepEvent& e = events[s];
    for (int32_t p = 16 * s; p < 16 * (s + 1); ++p) e.accepted.push_back(p);
    e.step = s;
    e.committed = 16 * (s + 1);
    e.nfe = s == 0 ? 1 : s;  // the unverified step runs no target forward
  }
  events[0].tree_depth = 2, events[0].tree_width = 3;
  events[1].verified = false;
  events[2].tree_depth = 4, events[2].tree_width = 5;
  for (const StepEvent& e : events) g.events.push_back(e);
  g.nfe = 3;
  const std::string stem = write_synthetic_trace("tree", G, g);
  const std::string common = "--trace " + quote(stem + ".trace.json") + " --step 3 --frames 3 --layout " +
                             quote(stem + ".layout.json") + " --screenshot ";
  viewer(common + quote(stem + ".png") + " --overlays tree,unverified");
  if (HasFatalFailure()) return;
  viewer(common + quote(stem + ".none.png") + " --overlays none");
  if (HasFatalFailure()) return;
  std::ifstream lf(stem + ".layout.json");
  const nlohmann::json lane = nlohmann::json::parse(lf)["lanes"][0];
  const Region r{lane["x"].get<double>(), lane["y"].get<double>(), lane["w"].get<double>(), G};
  const Png png = load_png(stem + ".png"), none = load_png(stem + ".none.png");
  ASSERT_GT(png.w, 0);
  ASSERT_EQ(none.w, png.w);
  const Rgb kUnverifiedRgb{166, 255, 0};
  const float ramp[2][3] = {{0.13f, 0.57f, 0.55f}, {0.99f, 0.91f, 0.14f}};  // depth 2 and 4 of 4
  const double cs = r.side / static_cast<double>(G);
  for (int32_t cell = 0; cell < G * G; ++cell) {
    const int s = cell / 16;
    const double x0 = r.x + static_cast<double>(cell % G) * cs, y0 = r.y + static_cast<double>(cell / G) * cs;
    int hatched = 0, total = 0, wrong = 0;
    for (int y = static_cast<int>(y0 + cs * 0.25); y < static_cast<int>(y0 + cs * 0.75); ++y)
      for (int x = static_cast<int>(x0 + cs * 0.25); x < static_cast<int>(x0 + cs * 0.75); ++x) {
        const Rgb p = png.at(x, y), q = none.at(x, y);
        ++total;
        hatched += near(p, kUnverifiedRgb, 1);
        if (s == 0 || s == 2) {
          const float* t = ramp[s / 2];
          auto tint = [&](int v, float c) { return static_cast<int>(std::lround(0.4 * v + 0.6 * 255 * c)); };
          wrong += !near(p, Rgb{tint(q.r, t[0]), tint(q.g, t[1]), tint(q.b, t[2])}, 3);
        } else if (s == 3 || !near(p, kUnverifiedRgb, 1)) {
          wrong += !near(p, q, 1);
        }
      }
    EXPECT_EQ(wrong, 0) << "cell " << cell << " (step " << s << "): " << wrong << " of " << total
                        << " pixels differ from the expected tint";
    if (s == 1) {
      EXPECT_GE(hatched, total / 5) << "unverified cell " << cell << " lacks the hatch";
      EXPECT_LE(hatched, total / 2) << "unverified cell " << cell << " is filled, not hatched";
    } else {
      EXPECT_EQ(hatched, 0) << "cell " << cell << " is hatched but was verified";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Methods, ViewerScreenshot, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string n = i.param.method;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace vkspec
