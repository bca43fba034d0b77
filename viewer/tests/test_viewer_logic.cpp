// The viewer's pure logic: cell overlay flags, islands, heat, tree sizes and unverified cells; run
// statistics; option parsing; the timeline; the kiosk's cycling of classes and prompts; how a run's
// condition is named.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "common/error.h"
#include "viewer/cell_overlay.h"
#include "viewer/kiosk.h"
#include "viewer/kiosk_prompts.h"
#include "viewer/overlay_settings.h"
#include "viewer/run_condition.h"
#include "viewer/run_stats.h"
#include "viewer/timeline.h"
#include "viewer/viewer_options.h"

namespace vkspec::viewer {
namespace {

StepEvent event(int64_t step, std::vector<int32_t> grid) {
  StepEvent e;
  e.step = step;
  e.grid = std::move(grid);
  return e;
}

TEST(CellOverlay, FlagsTheDisplayedStep) {
  const int32_t U = kUndecided;
  StepEvent e0 = event(0, {1, U, U, U});
  e0.proposed = {0, 1, 2};
  e0.accepted = {0};
  e0.rejected = {1};
  StepEvent e1 = event(1, {1, 2, 3, U});
  e1.proposed = {1, 2, 3};
  e1.accepted = {1};
  e1.rejected = {2};
  e1.resampled = {2};
  e1.islands = {{2, 3}};
  const CellOverlay o = build_cell_overlay({&e0, &e1}, 2);
  EXPECT_EQ(o.flags(0), kCellDecided);
  EXPECT_EQ(o.flags(1), kCellDecided | kCellAccepted);
  EXPECT_EQ(o.flags(2), kCellDecided | kCellRejected | kCellResampled);
  EXPECT_EQ(o.flags(3), kCellDrafted);  // proposed, not verified, not committed
  EXPECT_EQ(o.island(2), 1);
  EXPECT_EQ(o.island(3), 1);
  EXPECT_EQ(o.island(0), 0);
  ASSERT_EQ(o.islands.size(), 1u);
  EXPECT_EQ(o.islands[0].anchor, 2);
  // Heat: cell 0 accepted once (rate 1), cell 1 rejected then accepted (0.5), cell 2 rejected (0).
  EXPECT_EQ(o.heat(0), 255);
  EXPECT_EQ(o.heat(1), 128);
  EXPECT_EQ(o.heat(2), 1);
  EXPECT_EQ(o.heat(3), 0);
}

// Groups verified together (PJD's row windows, SJD-PAC's branches) go to the fourth channel.
TEST(CellOverlay, MarksTheVerifiedGroups) {
  const int32_t U = kUndecided;
  StepEvent e = event(0, {1, U, U, U});
  e.proposed = {1, 2, 3};
  e.groups = {{1}, {2, 3}};
  const CellOverlay o = build_cell_overlay({&e}, 2);
  EXPECT_EQ(o.group(0), 0);
  EXPECT_EQ(o.group(1), 1);
  EXPECT_EQ(o.group(2), 2);
  EXPECT_EQ(o.group(3), 2);
  EXPECT_EQ(o.island(2), 0);
}

// adaptive-tree's tree sizes go to the second texture, per cell of the step that committed it.
TEST(CellOverlay, KeepsTheTreeSizeOfTheCommittingStep) {
  const int32_t U = kUndecided;
  StepEvent e0 = event(0, {1, 2, U, U});
  e0.proposed = {1, 2};
  e0.accepted = {0, 1};
  e0.rejected = {2};
  e0.tree_depth = 3;
  e0.tree_width = 4;
  StepEvent e1 = event(1, {1, 2, 3, U});
  e1.accepted = {2};  // a step without a tree (0 x 0): its cell stays unmarked
  StepEvent e2 = event(2, {1, 2, 3, 4});
  e2.accepted = {3};
  e2.tree_depth = 300;  // clamped to the byte
  e2.tree_width = 7;
  const CellOverlay before = build_cell_overlay({&e0, &e1}, 2);
  EXPECT_EQ(before.tree_depth_max, 3);
  EXPECT_EQ(before.tree_depth(0), 3);
  EXPECT_EQ(before.tree_width(0), 4);
  EXPECT_EQ(before.tree_depth(1), 3);
  EXPECT_EQ(before.tree_depth(2), 0);
  EXPECT_EQ(before.tree_width(2), 0);
  EXPECT_EQ(before.tree_depth(3), 0);  // undecided
  EXPECT_EQ(before.commit_step, (std::vector<int32_t>{0, 0, 1, -1}));
  const CellOverlay o = build_cell_overlay({&e0, &e1, &e2}, 2);
  EXPECT_EQ(o.tree_depth_max, 300);
  EXPECT_EQ(o.tree_depth(0), 3);  // history: still the step that committed it
  EXPECT_EQ(o.tree_depth(3), 255);
  EXPECT_EQ(o.tree_width(3), 7);
  for (int32_t c = 0; c < 4; ++c) {
    EXPECT_EQ(o.tree_texels[static_cast<size_t>(c) * 4 + 2], 0);
    EXPECT_EQ(o.tree_texels[static_cast<size_t>(c) * 4 + 3], 0);
    EXPECT_EQ(o.flags(c) & kCellUnverified, 0) << c;
  }
  // The first texture is as without tree sizes.
  StepEvent plain0 = e0, plain1 = e1, plain2 = e2;
  for (StepEvent* e : {&plain0, &plain1, &plain2}) e->tree_depth = e->tree_width = 0;
  const CellOverlay p = build_cell_overlay({&plain0, &plain1, &plain2}, 2);
  EXPECT_EQ(p.texels, o.texels);
  EXPECT_EQ(p.tree_texels, std::vector<uint8_t>(16, 0));
  EXPECT_EQ(p.tree_depth_max, 0);
  EXPECT_TRUE(p.commit_step.empty());
}

// flashar's gates go to the second texture's b channel, 1 + 254 g, per accepted cell of every step.
TEST(CellOverlay, KeepsTheHeadWeightOfEachCell) {
  const int32_t U = kUndecided;
  StepEvent e0 = event(0, {1, U, U, U});
  e0.accepted = {0};
  e0.gates = {0.5f};
  StepEvent e1 = event(1, {1, 2, 3, U});
  e1.accepted = {1, 2};
  e1.gates = {1.0f, 0.0f};  // row 0: H alone; column 0: V alone
  const CellOverlay o = build_cell_overlay({&e0, &e1}, 2);
  EXPECT_EQ(o.gate(0), 128);  // 1 + round(127)
  EXPECT_EQ(o.gate(1), 255);
  EXPECT_EQ(o.gate(2), 1);
  EXPECT_EQ(o.gate(3), 0);  // undecided
  EXPECT_EQ(o.tree_depth(0), 0);
  StepEvent bad = e1;
  bad.gates = {1.0f};  // not one per accepted cell: ignored
  EXPECT_EQ(build_cell_overlay({&e0, &bad}, 2).gate(1), 0);
}

// vvs's skipped rounds: their cells stay flagged unverified at every later step.
TEST(CellOverlay, FlagsCellsCommittedWithoutVerification) {
  const int32_t U = kUndecided;
  StepEvent e0 = event(0, {1, U, U, U});
  e0.accepted = {0};
  StepEvent e1 = event(1, {1, 2, 3, U});
  e1.proposed = {1, 2};
  e1.accepted = {1, 2};
  e1.verified = false;
  e1.tree_depth = 2;  // an unverified round keeps the size it carries over
  e1.tree_width = 1;
  StepEvent e2 = event(2, {1, 2, 3, 4});
  e2.proposed = {3};
  e2.accepted = {3};
  const CellOverlay at1 = build_cell_overlay({&e0, &e1}, 2);
  EXPECT_EQ(at1.flags(0), kCellDecided);
  EXPECT_EQ(at1.flags(1), kCellDecided | kCellAccepted | kCellUnverified);
  EXPECT_EQ(at1.flags(2), kCellDecided | kCellAccepted | kCellUnverified);
  EXPECT_EQ(at1.flags(3), 0);
  EXPECT_EQ(at1.tree_depth(1), 2);
  EXPECT_EQ(at1.tree_width(1), 1);
  const CellOverlay at2 = build_cell_overlay({&e0, &e1, &e2}, 2);
  EXPECT_EQ(at2.flags(0), kCellDecided);
  EXPECT_EQ(at2.flags(1), kCellDecided | kCellUnverified);  // history
  EXPECT_EQ(at2.flags(2), kCellDecided | kCellUnverified);
  EXPECT_EQ(at2.flags(3), kCellDecided | kCellAccepted);
  EXPECT_EQ(at2.commit_step, (std::vector<int32_t>{0, 1, 1, 2}));
  EXPECT_EQ(at2.tree_depth(3), 0);
  // A step without a grid of the right size: its accepted and resampled lists say what it committed.
  StepEvent e1_listed = e1;
  e1_listed.grid.clear();
  const CellOverlay listed = build_cell_overlay({&e0, &e1_listed, &e2}, 2);
  EXPECT_EQ(listed.texels, at2.texels);
  EXPECT_EQ(listed.tree_texels, at2.tree_texels);
}

TEST(CellOverlay, RejectsAGridOfTheWrongSize) {
  StepEvent e = event(0, {1, 2});
  EXPECT_THROW(build_cell_overlay({&e}, 2), Error);
}

TEST(CellOverlay, IslandColoursAreDistinctAndClearOfTheMarks) {
  for (int a = 0; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) EXPECT_NE(island_colour(a), island_colour(b));
    const auto c = island_colour(a);
    // Not the accepted green, rejected red or amber: some channel pair differs from each.
    EXPECT_FALSE(c[0] < 0.5f && c[1] > 0.7f && c[2] < 0.5f) << a;
    EXPECT_FALSE(c[0] > 0.7f && c[1] < 0.5f && c[2] < 0.5f) << a;
    EXPECT_FALSE(c[0] > 0.7f && c[1] > 0.5f && c[1] < 0.8f && c[2] < 0.2f) << a;
  }
  EXPECT_EQ(island_colour(8), island_colour(0));
  EXPECT_EQ(island_colour(255), island_colour(0));  // the texel stores id % 255 + 1
}

TEST(RunStats, SumsUpToTheDisplayedStep) {
  std::vector<std::shared_ptr<const StepFrame>> frames;
  for (int i = 0; i < 3; ++i) {
    auto f = std::make_shared<StepFrame>();
    f->event.accepted = {i, i + 1};
    f->event.rejected = {i + 2};
    f->event.committed = 3 * (i + 1);
    f->event.nfe = i + 1;
    f->event.wall_ms = 10.0 * (i + 1);
    frames.push_back(f);
  }
  const RunStats s = run_stats(frames, 1, 16);
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.nfe, 2);
  EXPECT_EQ(s.committed, 6);
  EXPECT_DOUBLE_EQ(s.accepted_length, 3.0);
  EXPECT_DOUBLE_EQ(s.acceptance_rate, 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(s.mean_step_ms, 15.0);
  EXPECT_DOUBLE_EQ(s.last_step_ms, 20.0);
  EXPECT_EQ(run_stats(frames, 99, 16).steps, 3);
  EXPECT_EQ(run_stats({}, 0, 16).steps, 0);
}

TEST(ViewerOptions, ParsesAndRejects) {
  const ViewerOptions o =
      parse_viewer_options({"--method", "sjd", "--options", "window=16,init=above", "--class", "3", "--seed", "2",
                            "--screenshot", "v.png", "--frames", "200", "--overlays", "accepted,islands"});
  EXPECT_EQ(o.method, "sjd");
  EXPECT_EQ(o.method_options.at("window"), "16");
  EXPECT_EQ(o.method_options.at("init"), "above");
  EXPECT_EQ(o.class_id, 3);
  EXPECT_EQ(o.seed, 2u);
  EXPECT_EQ(o.frames, 200);
  EXPECT_EQ(o.overlays, kShowAccepted | kShowIslands);
  EXPECT_EQ(OverlaySettings::parse_list("tree,unverified"), kShowTree | kShowUnverified);
  EXPECT_EQ(OverlaySettings::parse_list("gate"), kShowGate);
  EXPECT_EQ(OverlaySettings().show & kShowGate, 0u);  // off until asked for, as heat and tree
  EXPECT_EQ(OverlaySettings::parse_list("all") & (kShowTree | kShowUnverified), kShowTree | kShowUnverified);
  EXPECT_THROW(parse_viewer_options({"--frames", "10"}), Error);  // needs --screenshot
  EXPECT_THROW(parse_viewer_options({"--overlays", "sparkles"}), Error);
  EXPECT_THROW(parse_viewer_options({"--options", "window"}), Error);
  EXPECT_THROW(parse_viewer_options({"--kiosk", "--trace", "t.json"}), Error);
  EXPECT_THROW(parse_viewer_options({"--bogus"}), Error);
}

TEST(ViewerOptions, TakesAPromptWhereNothingContradictsIt) {
  const ViewerOptions o = parse_viewer_options({"--prompt", "an ankle boot", "--seed", "4"});
  ASSERT_TRUE(o.prompt.has_value());
  EXPECT_EQ(*o.prompt, "an ankle boot");
  EXPECT_FALSE(o.class_given);
  EXPECT_FALSE(parse_viewer_options({}).prompt.has_value());
  EXPECT_TRUE(parse_viewer_options({"--class", "0"}).class_given);
  // An empty prompt parses: the model says why it cannot take it.
  EXPECT_EQ(parse_viewer_options({"--prompt", ""}).prompt, std::string());
  EXPECT_EQ(parse_viewer_options({"--kiosk", "--kiosk-prompts", "p.txt"}).kiosk_prompts, "p.txt");
  EXPECT_THROW(parse_viewer_options({"--prompt", "a", "--class", "1"}), Error);
  EXPECT_THROW(parse_viewer_options({"--prompt", "a", "--trace", "t.json"}), Error);
  EXPECT_THROW(parse_viewer_options({"--prompt", "a", "--kiosk"}), Error);
  EXPECT_THROW(parse_viewer_options({"--kiosk-prompts", "p.txt"}), Error);  // needs --kiosk
  EXPECT_THROW(parse_viewer_options({"--kiosk", "--kiosk-prompts", ""}), Error);
}

TEST(KioskPrompts, ReadsOnePromptALine) {
  const std::string path = ::testing::TempDir() + "/viewer_kiosk_prompts.txt";
  std::ofstream(path) << "  an ankle boot\r\n\n\t\na handbag \nno newline at the end";
  EXPECT_EQ(read_prompt_file(path), (std::vector<std::string>{"an ankle boot", "a handbag", "no newline at the end"}));
  EXPECT_EQ(kiosk_prompts(path).size(), 3u);
  EXPECT_EQ(kiosk_prompts(""), example_prompts());
  EXPECT_GE(example_prompts().size(), 3u);
  std::ofstream(path) << " \n\n";
  EXPECT_THROW(read_prompt_file(path), Error);  // no prompt in it
  std::remove(path.c_str());
  EXPECT_THROW(read_prompt_file(path), Error);
}

TEST(RunCondition, NamesClassesPromptsAndOtherConditions) {
  EXPECT_EQ(RunCondition::of_class(3).text(), "class 3");
  EXPECT_EQ(RunCondition::of(ClassLabel(5)).text(), "class 5");
  RunCondition p;
  p.prompt = "a red\nankle boot";
  EXPECT_EQ(p.text(), "\"a red ankle boot\"");  // one line in a title
  EXPECT_EQ(p.class_id, -1);
  p.prompt = std::string(20, 'a');
  EXPECT_EQ(p.text(12), "\"aaaaaaaaa...\"");
  const std::string e4 = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";  // four 2-byte characters
  EXPECT_EQ(shortened(e4, 6), "\xc3\xa9...");                 // never half a character
  EXPECT_EQ(shortened(e4, 4), "...");
  EXPECT_EQ(shortened(e4, 8), e4);
  Generation g;
  g.class_id = -1;
  g.condition = "caption embeddings c.npy (7 of 120 tokens)";
  EXPECT_EQ(RunCondition::of(g).text(), g.condition);
  g.prompt = "a handbag";
  EXPECT_EQ(RunCondition::of(g).text(), "\"a handbag\"");
  EXPECT_EQ(RunRecord("ar", RunCondition::of(g), 1, 2).prompt(), "a handbag");
}

TEST(Timeline, FollowsLiveRunsAndPlaysReplays) {
  Timeline live;
  live.restart(false);
  live.advance(5, false, 0.1, 30);
  EXPECT_EQ(live.step, 4);
  live.go_to(99, 5);  // the user's move stops following, clamped to the steps there are
  live.advance(8, false, 0.1, 30);
  EXPECT_EQ(live.step, 4);
  Timeline replay;
  replay.restart(true);
  replay.advance(100, true, 0.5, 30);  // 15 steps in half a second
  EXPECT_EQ(replay.step, 15);
  replay.advance(100, true, 10, 30);
  EXPECT_EQ(replay.step, 99);
  EXPECT_FALSE(replay.playing);  // stops at the end of ended runs
  replay.toggle_play(100);
  EXPECT_TRUE(replay.playing);
  EXPECT_EQ(replay.position, 0);  // from the start again
  Timeline pinned;
  pinned.pinned = 7;
  pinned.restart(true);
  EXPECT_FALSE(pinned.playing);
  pinned.advance(3, false, 0.1, 30);
  EXPECT_EQ(pinned.step, 2);
  pinned.advance(20, false, 0.1, 30);
  EXPECT_EQ(pinned.step, 7);
}

// Lanes whose runs ended as `states` (RunState per method), none with a frame.
std::vector<LaneView> ended_lanes(const std::vector<std::pair<std::string, RunState>>& states,
                                  bool device_lost = false) {
  std::vector<LaneView> lanes;
  for (const auto& [method, state] : states) {
    LaneView l;
    l.record = std::make_shared<RunRecord>(method, RunCondition::of_class(0), 0, 2);
    l.record->finish(state, state == RunState::Failed ? "boom" : "", device_lost);
    l.label = method;
    lanes.push_back(std::move(l));
  }
  return lanes;
}

TEST(Kiosk, CyclesMethodsAndClassesAndSkipsMethodsThatCannotStart) {
  int64_t counter = 0;
  Kiosk kiosk(counter, {"ar", "sjd", "sd"}, 100, 0.0);
  const KioskRun first = kiosk.next(10);
  ASSERT_EQ(first.runs.size(), 1u);  // ar races nothing
  EXPECT_EQ(first.runs[0].method, "ar");
  const KioskRun second = kiosk.next(10);
  ASSERT_EQ(second.runs.size(), 2u);  // a speculative method races ar
  EXPECT_EQ(second.runs[0].method, "sjd");
  EXPECT_EQ(second.runs[1].method, "ar");
  EXPECT_EQ(second.class_id, 1);
  EXPECT_EQ(second.seed, 101u);
  // sd fails before its first step (a model it needs is missing): left out from then on.
  EXPECT_EQ(kiosk.next(10).runs[0].method, "sd");
  EXPECT_TRUE(kiosk.due(ended_lanes({{"sd", RunState::Failed}, {"ar", RunState::Finished}})));
  EXPECT_EQ(kiosk.next(10).runs[0].method, "ar");
  EXPECT_EQ(kiosk.next(10).runs[0].method, "sjd");
  EXPECT_EQ(kiosk.next(10).runs[0].method, "ar");
  EXPECT_EQ(counter, 7);  // a restarted viewer goes on from here
  std::vector<LaneView> running = ended_lanes({{"ar", RunState::Finished}});
  running[0].record = std::make_shared<RunRecord>("ar", RunCondition::of_class(0), 0, 2);
  EXPECT_FALSE(kiosk.due(running));
  EXPECT_THROW(kiosk.due(ended_lanes({{"ar", RunState::Failed}}, true)), RestartRequired);
}

TEST(Kiosk, CyclesPromptsAndTakesAVisitorsAtOnce) {
  int64_t counter = 0;
  Kiosk kiosk(counter, {"ar", "sjd"}, 100, 0.0, {"an ankle boot", "a handbag"});
  EXPECT_TRUE(kiosk.takes_prompts());
  const KioskRun first = kiosk.next(0);
  EXPECT_EQ(first.prompt, "an ankle boot");
  EXPECT_EQ(first.class_id, -1);
  EXPECT_FALSE(first.visitor);
  const KioskRun second = kiosk.next(0);
  EXPECT_EQ(second.prompt, "a handbag");
  ASSERT_EQ(second.runs.size(), 2u);  // sjd races ar on the same prompt
  const KioskRun visit = kiosk.visit("a red sneaker");
  EXPECT_EQ(visit.prompt, "a red sneaker");
  EXPECT_TRUE(visit.visitor);
  EXPECT_EQ(visit.runs[0].method, "ar");  // the next method, as a cycled run would have
  EXPECT_EQ(visit.seed, 102u);
  // A visitor's image stays up though the kiosk holds others for 0 s.
  EXPECT_FALSE(kiosk.due(ended_lanes({{"ar", RunState::Finished}})));
  EXPECT_EQ(kiosk.next(0).prompt, "a handbag");  // the list goes on by run number
  EXPECT_TRUE(kiosk.due(ended_lanes({{"sjd", RunState::Finished}, {"ar", RunState::Finished}})));
  EXPECT_FALSE(Kiosk(counter, {"ar"}, 0, 0.0).takes_prompts());
}

}  // namespace
}  // namespace vkspec::viewer
