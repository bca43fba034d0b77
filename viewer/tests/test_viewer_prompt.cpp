// The viewer with a prompt-driven model (Janus-Pro): a tiny random one with a tokenizer
// (prompt_model.h) and the shipped VQ, so nothing needs PyTorch. Checked: the model loads and its
// runs take the prompt the controls hold (the first example without --prompt); an empty or too long
// prompt is an Error with the message the UI shows; --class is refused for it and --prompt for a
// class model. Under Xvfb: the interactive viewer draws a prompt run, names the prompt in its
// layout and saved trace, and a replay of that trace shows it again; the kiosk cycles a prompt
// file; an empty --prompt ends the viewer with the message.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "decoding/trace_reader.h"
#include "tests/support/python_reference.h"
#include "tests/support/vulkan_test.h"
#include "viewer/controls.h"
#include "viewer/run_condition.h"
#include "viewer/tests/prompt_model.h"
#include "viewer/viewer_models.h"

// stb_image's implementation, once in this program: xvfb_viewer.h reads the PNGs with it.
#define STB_IMAGE_IMPLEMENTATION
#include "viewer/tests/xvfb_viewer.h"

namespace vkspec::viewer {
namespace {

const std::string kVq = std::string(VKSPEC_ASSETS_DIR) + "/fmnist_vq.safetensors";

struct Files {
  prompt_test::PromptModel janus;
  std::string class_model, dir;
};

const Files& files() {
  static const Files f = [] {
    Files r;
    r.dir = vkspec::testing::scratch_dir("viewer_prompt");
    r.janus = prompt_test::write_prompt_model(r.dir, VKSPEC_SOURCE_DIR);
    vkspec::testing::TinyGptSpec spec;
    spec.vocab = 1024;  // the shipped VQ's codes
    spec.grid = 4;
    spec.classes = 3;
    r.class_model = r.dir + "/class_gpt.safetensors";
    vkspec::testing::write_tiny_gpt(r.class_model, spec);
    return r;
  }();
  return f;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

frontend::ModelFiles model_files(const std::string& target) {
  frontend::ModelFiles m;
  m.target = target;
  m.tokenizer = kVq;
  return m;
}

class ViewerPrompt : public vkspec::testing::VulkanTest {
 protected:
  // Loaded once: every companion the panel may ask for, as the viewer loads them.
  ViewerModels& janus() {
    static ViewerModels m(ctx(), frontend::ModelCatalog(model_files(files().janus.model)), std::nullopt);
    return m;
  }
  ViewerModels& class_model() {
    static ViewerModels m(ctx(), frontend::ModelCatalog(model_files(files().class_model)), std::nullopt);
    return m;
  }
  const std::vector<std::string> methods_ = {"ar"};
};

TEST_F(ViewerPrompt, APromptDrivenModelLoadsAndItsRunsTakeThePrompt) {
  ViewerModels& m = janus();
  EXPECT_TRUE(m.takes_prompt());
  EXPECT_EQ(m.grid(), 8);
  // Without --prompt: the first example, editable in the box.
  Controls c = initial_controls(parse_viewer_options({}), methods_, m);
  EXPECT_STREQ(c.prompt, "an ankle boot");
  c = initial_controls(parse_viewer_options({"--prompt", "a pair of trousers"}), methods_, m);
  EXPECT_STREQ(c.prompt, "a pair of trousers");
  const std::shared_ptr<const Condition> cond = condition_of(c, m);
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ(cond->prompt(), "a pair of trousers");
  EXPECT_NE(cond->null_form(), nullptr);  // Janus's own unconditional row for CFG
  const RunCondition shown = RunCondition::of(*cond);
  EXPECT_EQ(shown.class_id, -1);
  EXPECT_EQ(shown.prompt, "a pair of trousers");
  EXPECT_EQ(shown.text(), "\"a pair of trousers\"");
}

TEST_F(ViewerPrompt, AnEmptyOrTooLongPromptIsAMessageNotACrash) {
  Controls c = initial_controls(parse_viewer_options({}), methods_, janus());
  std::snprintf(c.prompt, sizeof(c.prompt), "%s", "   ");
  EXPECT_NE(message_of([&] { condition_of(c, janus()); }).find("the prompt is empty"), std::string::npos);
  std::string long_prompt;
  for (int i = 0; i < 20; ++i) long_prompt += "a sneaker ";
  std::snprintf(c.prompt, sizeof(c.prompt), "%s", long_prompt.c_str());
  const std::string m = message_of([&] { condition_of(c, janus()); });
  EXPECT_NE(m.find("at most " + std::to_string(prompt_test::kPromptPositions)), std::string::npos) << m;
}

TEST_F(ViewerPrompt, ClassesAndPromptsGoToTheModelsThatTakeThem) {
  EXPECT_NE(message_of([&] {
              initial_controls(parse_viewer_options({"--class", "1"}), methods_, janus());
            }).find("takes a prompt, not a class"),
            std::string::npos);
  ViewerModels& m = class_model();
  EXPECT_FALSE(m.takes_prompt());
  EXPECT_NE(message_of([&] {
              initial_controls(parse_viewer_options({"--prompt", "a handbag"}), methods_, m);
            }).find("takes class labels, not a prompt"),
            std::string::npos);
  const Controls c = initial_controls(parse_viewer_options({"--class", "2"}), methods_, m);
  const auto cond = condition_of(c, m);
  const auto* label = dynamic_cast<const ClassLabel*>(cond.get());
  ASSERT_NE(label, nullptr);
  EXPECT_EQ(label->id(), 2);
  EXPECT_EQ(RunCondition::of(*cond).text(), "class 2");
}

// The viewer itself, under Xvfb.
class ViewerPromptWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(VKSPEC_XVFB_RUN).empty())
      GTEST_SKIP() << "xvfb-run not found (apt-get install xvfb xauth): the viewer needs an X display";
  }
  // The viewer's exit code with `args`, its output in `out`.
  int viewer(const std::string& args, std::string* out) {
    const std::string cmd = xvfb::viewer_command(VKSPEC_XVFB_RUN, VKSPEC_VIEWER_BIN, args);
    const int code = xvfb::run(cmd, out);
    std::fprintf(stderr, "%s\n%s", cmd.c_str(), out->c_str());
    return code;
  }
  std::string models() const {
    return "--model " + xvfb::quote(files().janus.model) + " --vq " + xvfb::quote(kVq) + " ";
  }
  static nlohmann::json read_json(const std::string& path) {
    std::ifstream f(path);
    return nlohmann::json::parse(f);
  }
};

// The screenshot's image region varies (a drawn image, not a blank canvas).
double image_stddev(const xvfb::Png& png, const nlohmann::json& lane) {
  const int x0 = static_cast<int>(lane["x"].get<double>()), y0 = static_cast<int>(lane["y"].get<double>());
  const int side = static_cast<int>(lane["w"].get<double>());
  double sum = 0, sum2 = 0;
  int n = 0;
  for (int y = y0; y < y0 + side && y < png.h; y += 2)
    for (int x = x0; x < x0 + side && x < png.w; x += 2) {
      const xvfb::Rgb p = png.at(x, y);
      const double l = (p.r + p.g + p.b) / 3.0;
      sum += l, sum2 += l * l, ++n;
    }
  const double mean = n ? sum / n : 0;
  return n ? std::sqrt(std::max(0.0, sum2 / n - mean * mean)) : 0;
}

TEST_F(ViewerPromptWindow, DrawsAPromptRunAndReplaysItsTrace) {
  const std::string stem = files().dir + "/interactive", prompt = "a pair of trousers";
  std::string out;
  ASSERT_EQ(viewer(models() + "--method ar --prompt " + xvfb::quote(prompt) + " --seed 3 --frames 5 --screenshot " +
                       xvfb::quote(stem + ".png") + " --layout " + xvfb::quote(stem + ".layout.json") +
                       " --save-trace " + xvfb::quote(stem + ".trace.json"),
                   &out),
            0);
  const nlohmann::json lane = read_json(stem + ".layout.json")["lanes"][0];
  EXPECT_EQ(lane["prompt"].get<std::string>(), prompt);
  EXPECT_EQ(lane["class"].get<int64_t>(), -1);
  EXPECT_EQ(lane["steps"].get<int64_t>(), 64);  // ar: one token a step on the 8x8 grid
  const xvfb::Png png = xvfb::load_png(stem + ".png");
  ASSERT_EQ(png.w, 1280) << stem << ".png missing or unreadable";
  EXPECT_GT(image_stddev(png, lane), 5.0) << "the image region looks blank";

  const Trace trace = read_trace(stem + ".trace.json");
  ASSERT_EQ(trace.images.size(), 1u);
  EXPECT_EQ(trace.images[0].prompt, prompt);
  EXPECT_EQ(trace.images[0].class_id, -1);
  EXPECT_EQ(trace.images[0].tokens.size(), 64u);

  out.clear();
  ASSERT_EQ(viewer("--trace " + xvfb::quote(stem + ".trace.json") + " --vq " + xvfb::quote(kVq) +
                       " --frames 5 --screenshot " + xvfb::quote(stem + ".replay.png") + " --layout " +
                       xvfb::quote(stem + ".replay.layout.json"),
                   &out),
            0);
  EXPECT_EQ(read_json(stem + ".replay.layout.json")["lanes"][0]["prompt"].get<std::string>(), prompt);
}

TEST_F(ViewerPromptWindow, TheKioskCyclesAPromptFile) {
  const std::string stem = files().dir + "/kiosk";
  std::ofstream(stem + ".prompts.txt") << "a handbag\r\n\n  a sneaker  \n";
  std::string out;
  // Held long enough for the screenshot of the first run to be taken before the next one starts.
  ASSERT_EQ(viewer(models() + "--kiosk --hold 600 --kiosk-prompts " + xvfb::quote(stem + ".prompts.txt") +
                       " --frames 5 --screenshot " + xvfb::quote(stem + ".png") + " --layout " +
                       xvfb::quote(stem + ".layout.json"),
                   &out),
            0);
  EXPECT_NE(out.find("kiosk run 0: ar, \"a handbag\""), std::string::npos);
  const nlohmann::json lanes = read_json(stem + ".layout.json")["lanes"];
  ASSERT_EQ(lanes.size(), 1u);  // ar races nothing
  EXPECT_EQ(lanes[0]["prompt"].get<std::string>(), "a handbag");
}

TEST_F(ViewerPromptWindow, AnEmptyPromptEndsTheViewerWithTheMessage) {
  std::string out;
  EXPECT_EQ(viewer(models() + "--prompt ' ' --frames 2 --screenshot " + xvfb::quote(files().dir + "/empty.png"), &out),
            1);
  EXPECT_NE(out.find("the prompt is empty"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(viewer(models() + "--class 1 --frames 2 --screenshot " + xvfb::quote(files().dir + "/class.png"), &out), 1);
  EXPECT_NE(out.find("takes a prompt, not a class"), std::string::npos) << out;
}

}  // namespace
}  // namespace vkspec::viewer
