// Trace reader: what write_trace writes reads back identically (grids rebuilt step by step), and
// every way a trace can be damaged or lie fails with an error naming the file and the field.
#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "decoding/trace.h"
#include "decoding/trace_reader.h"
#include "common/error.h"

namespace vkspec {
namespace {

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "\"" << (text) << "\" lacks \"" << (part) << "\""

using json = nlohmann::json;

// A 2x2 grid committed in three steps: step 0 accepts 0, step 1 accepts 1 and rejects 2 (island),
// resampling 2; step 2 accepts 3.
std::vector<Generation> sample_generations() {
  Generation g;
  g.method = "sjd";
  g.class_id = 3;
  g.seed = 18446744073709551615ull;  // the largest seed survives the round trip
  g.tokens = {5, 6, 7, 8};
  StepEvent e0;
  e0.step = 0;
  e0.proposed = {0, 1};
  e0.proposed_tokens = {5, 2};
  e0.accepted = {0};
  e0.rejected = {1};
  e0.committed = 1;
  e0.nfe = 1;
  e0.wall_ms = 1.5;
  StepEvent e1;
  e1.step = 1;
  e1.proposed = {1, 2};
  e1.proposed_tokens = {6, 1};
  e1.accepted = {1};
  e1.rejected = {2};
  e1.resampled = {2};
  e1.islands = {{2}};
  e1.groups = {{1}, {2}};
  e1.committed = 3;
  e1.nfe = 2;
  e1.device_ms = 0.25;
  StepEvent e2;
  e2.step = 2;
  e2.proposed = {3};
  e2.proposed_tokens = {8};
  e2.accepted = {3};
  e2.gates = {0.25f};  // flashar's: one per accepted position
  e2.committed = 4;
  e2.nfe = 3;
  g.events = {e0, e1, e2};
  g.nfe = 3;
  g.wall_ms = 12.5;
  Generation ar = g;
  ar.method = "ar";
  ar.seed = 7;
  ar.events.clear();  // traced without events
  return {g, ar};
}

TraceConfig sample_config() {
  TraceConfig c;
  c.model = "model.safetensors";
  c.grid_size = 2;
  c.vocab_size = 16;
  c.sampler.cfg = 2.5f;
  c.sampler.top_k = 4;
  c.options = {{"window", "16"}};
  return c;
}

json sample_json() { return json::parse(trace_json(sample_config(), sample_generations())); }

std::string text_error(const std::string& text) {
  try {
    parse_trace(text, "t.json");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "parsed without error: " << text.substr(0, 200);
  return {};
}

std::string parse_error(const json& j) { return text_error(j.dump()); }

TEST(TraceReader, RoundTripsWhatWriteTraceWrites) {
  const std::string path = ::testing::TempDir() + "vkspec_trace_" + std::to_string(getpid()) + ".json";
  write_trace(path, sample_config(), sample_generations());
  const Trace t = read_trace(path);
  std::remove(path.c_str());
  EXPECT_EQ(t.config.model, "model.safetensors");
  EXPECT_EQ(t.config.grid_size, 2);
  EXPECT_EQ(t.config.vocab_size, 16);
  EXPECT_FLOAT_EQ(t.config.sampler.cfg, 2.5f);
  EXPECT_EQ(t.config.sampler.top_k, 4);
  EXPECT_EQ(t.config.options.at("window"), "16");
  ASSERT_EQ(t.images.size(), 2u);
  const Generation& g = t.images[0];
  EXPECT_EQ(g.method, "sjd");
  EXPECT_EQ(g.class_id, 3);
  EXPECT_EQ(g.seed, 18446744073709551615ull);
  EXPECT_EQ(g.tokens, (std::vector<int32_t>{5, 6, 7, 8}));
  EXPECT_EQ(g.nfe, 3);
  ASSERT_EQ(g.events.size(), 3u);
  EXPECT_EQ(g.events[1].rejected, std::vector<int32_t>{2});
  EXPECT_EQ(g.events[1].islands, (std::vector<std::vector<int32_t>>{{2}}));
  EXPECT_EQ(g.events[1].groups, (std::vector<std::vector<int32_t>>{{1}, {2}}));
  EXPECT_TRUE(g.events[0].groups.empty());  // not written: optional
  EXPECT_EQ(g.events[2].gates, std::vector<float>{0.25f});
  EXPECT_TRUE(g.events[1].gates.empty());
  EXPECT_DOUBLE_EQ(g.events[1].device_ms, 0.25);
  EXPECT_FALSE(g.events[1].done);
  EXPECT_TRUE(g.events[2].done);
  EXPECT_TRUE(t.images[1].events.empty());
}

// The entropy-aware temperature is written only when on and read back exactly; a trace without it
// sampled without it.
TEST(TraceReader, RoundTripsTheEntropyTemperature) {
  EXPECT_FALSE(sample_json()["config"].contains("entropy_temperature"));
  EXPECT_FALSE(parse_trace(sample_json().dump(), "t.json").config.sampler.entropy.on);
  TraceConfig c = sample_config();
  c.sampler.entropy.on = true;
  c.sampler.entropy.b = 4.5f;
  c.sampler.entropy.c = 0.7f;
  const Trace t = parse_trace(trace_json(c, sample_generations()), "t.json");
  EXPECT_TRUE(t.config.sampler.entropy.on);
  EXPECT_EQ(t.config.sampler.entropy.a, 2.5f);
  EXPECT_EQ(t.config.sampler.entropy.b, 4.5f);
  EXPECT_EQ(t.config.sampler.entropy.c, 0.7f);
  EXPECT_EQ(t.config.sampler.str(), c.sampler.str());
  json j = json::parse(trace_json(c, sample_generations()));
  j["config"]["entropy_temperature"]["b"] = 0;
  EXPECT_CONTAINS(parse_error(j), "config.entropy_temperature.b");
  j["config"]["entropy_temperature"] = true;
  EXPECT_CONTAINS(parse_error(j), "config.entropy_temperature: expected an object");
}

TEST(TraceReader, GridReplayRebuildsEachStep) {
  const Trace t = parse_trace(sample_json().dump(), "t.json");
  GridReplay r(t.images[0].tokens);
  const int32_t U = kUndecided;
  EXPECT_EQ(r.apply(t.images[0].events[0]), (std::vector<int32_t>{5, U, U, U}));
  EXPECT_EQ(r.apply(t.images[0].events[1]), (std::vector<int32_t>{5, 6, 7, U}));
  EXPECT_EQ(r.apply(t.images[0].events[2]), (std::vector<int32_t>{5, 6, 7, 8}));
}

TEST(TraceReader, GridReplayCommitsUnlistedPositionsInRasterOrder) {
  GridReplay r({1, 2, 3, 4});
  StepEvent e;
  e.committed = 2;  // lists nothing: a method that commits a prefix without listing it
  const int32_t U = kUndecided;
  EXPECT_EQ(r.apply(e), (std::vector<int32_t>{1, 2, U, U}));
  e.accepted = {3};
  e.committed = 4;
  EXPECT_EQ(r.apply(e), (std::vector<int32_t>{1, 2, 3, 4}));
}

TEST(TraceReader, MissingFileNamesThePath) {
  try {
    read_trace("/nonexistent/dir/trace.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_CONTAINS(e.what(), "/nonexistent/dir/trace.json");
  }
}

TEST(TraceReader, RejectsMalformedDocuments) {
  EXPECT_CONTAINS(text_error(""), "t.json: not valid JSON");
  EXPECT_CONTAINS(text_error("{\"format\":"), "not valid JSON");
  // Found by libFuzzer: a number past a double's range is out_of_range, not a parse_error.
  EXPECT_CONTAINS(text_error("88884249e503"), "not valid JSON");
  EXPECT_CONTAINS(text_error("{\"format\": 1e999}"), "not valid JSON");
  EXPECT_CONTAINS(text_error("[1,2]"), "expected an object");
  EXPECT_CONTAINS(text_error(std::string(100, '[') + std::string(100, ']')), "nested deeper");
  EXPECT_CONTAINS(text_error("{}"), "missing \"format\"");
  json j = sample_json();
  j["format"] = "vkspec-trace-9";
  EXPECT_CONTAINS(parse_error(j), "vkspec-trace-9");
  j = sample_json();
  j["images"] = json::array();
  EXPECT_CONTAINS(parse_error(j), "no images");
}

TEST(TraceReader, RejectsBadConfig) {
  json j = sample_json();
  j["config"]["grid_size"] = 0;
  EXPECT_CONTAINS(parse_error(j), "config.grid_size: 0 is out of range");
  j = sample_json();
  j["config"]["grid_size"] = "2";
  EXPECT_CONTAINS(parse_error(j), "config.grid_size: expected an integer, got string");
  j = sample_json();
  j["config"]["vocab_size"] = 1ll << 40;
  EXPECT_CONTAINS(parse_error(j), "config.vocab_size");
  j = sample_json();
  j["config"]["temperature"] = 0;
  EXPECT_CONTAINS(parse_error(j), "temperature");
  j = sample_json();
  j["config"]["top_p"] = 1.5;
  EXPECT_CONTAINS(parse_error(j), "config.top_p");
  j = sample_json();
  j["config"]["options"] = {{"window", 16}};
  EXPECT_CONTAINS(parse_error(j), "config.options.window: expected a string");
  j = sample_json();
  j["config"].erase("model");
  EXPECT_CONTAINS(parse_error(j), "config: missing \"model\"");
}

TEST(TraceReader, RejectsBadImages) {
  json j = sample_json();
  j["images"][0]["tokens"][1] = {6};
  EXPECT_CONTAINS(parse_error(j), "images[0].tokens[1]: 1 tokens, the grid is 2 wide");
  j = sample_json();
  j["images"][0]["tokens"][0][1] = 16;
  EXPECT_CONTAINS(parse_error(j), "images[0].tokens[0][1]: 16 is out of range [0, 15]");
  j = sample_json();
  j["images"][0]["tokens"].erase(1);
  EXPECT_CONTAINS(parse_error(j), "images[0].tokens: 1 rows");
  j = sample_json();
  j["images"][1]["seed"] = -1;
  EXPECT_CONTAINS(parse_error(j), "images[1].seed: -1 is negative");
  j = sample_json();
  j["images"][0]["method"] = "";
  EXPECT_CONTAINS(parse_error(j), "images[0].method: empty");
  j = sample_json();
  j["images"][0]["class"] = -2;
  EXPECT_CONTAINS(parse_error(j), "images[0].class");
  j = sample_json();
  j["images"][0]["nfe"] = 4;
  EXPECT_CONTAINS(parse_error(j), "images[0].nfe: 4 differs from the last step's 3");
  j = sample_json();
  j["images"][0]["wall_ms"] = -1.0;
  EXPECT_CONTAINS(parse_error(j), "images[0].wall_ms");
}

TEST(TraceReader, RejectsLyingEvents) {
  json j = sample_json();
  j["images"][0]["events"][1]["accepted"][0] = 4;
  EXPECT_CONTAINS(parse_error(j), "images[0].events[1].accepted[0]: 4 is out of range [0, 3]");
  j = sample_json();
  j["images"][0]["events"][1]["proposed_tokens"] = {6};
  EXPECT_CONTAINS(parse_error(j), "images[0].events[1].proposed_tokens: 1 tokens for 2 proposed positions");
  j = sample_json();
  j["images"][0]["events"][0]["proposed_tokens"][0] = 99;
  EXPECT_CONTAINS(parse_error(j), "proposed_tokens[0]: 99 is out of range");
  j = sample_json();
  j["images"][0]["events"][2]["step"] = 5;
  EXPECT_CONTAINS(parse_error(j), "images[0].events[2].step: 5, expected 2");
  j = sample_json();
  j["images"][0]["events"][1]["committed"] = 0;
  EXPECT_CONTAINS(parse_error(j), "events[1].committed: 0 is less than the previous step's 1");
  j = sample_json();
  j["images"][0]["events"][1]["nfe"] = 0;
  EXPECT_CONTAINS(parse_error(j), "events[1].nfe: 0 is less than");
  j = sample_json();
  j["images"][0]["events"][0]["accepted"] = {0, 1, 2};  // three committed, count says one
  EXPECT_CONTAINS(parse_error(j), "images[0].events[0]: lists 3 committed positions");
  j = sample_json();
  j["images"][0]["events"][1]["islands"] = json::array({json::array()});
  EXPECT_CONTAINS(parse_error(j), "events[1].islands[0]: an island has no positions");
  j = sample_json();
  j["images"][0]["events"][1]["groups"] = json::array({json::array()});
  EXPECT_CONTAINS(parse_error(j), "events[1].groups[0]: a group has no positions");
  j = sample_json();
  j["images"][0]["events"][2]["committed"] = 3;
  j["images"][0]["events"][2]["accepted"] = json::array();
  j["images"][0]["events"][2].erase("gates");
  EXPECT_CONTAINS(parse_error(j), "the image is incomplete");
  j = sample_json();
  j["images"][0]["events"].push_back(j["images"][0]["events"][2]);
  j["images"][0]["events"][3]["step"] = 3;
  EXPECT_CONTAINS(parse_error(j), "already complete");
  j = sample_json();
  j["images"][0]["events"][2]["gates"] = {0.5, 0.5};
  EXPECT_CONTAINS(parse_error(j), "events[2].gates: 2 gates for 1 accepted positions");
  j = sample_json();
  j["images"][0]["events"][2]["gates"] = {1.5};
  EXPECT_CONTAINS(parse_error(j), "events[2].gates[0]: 1.5 is out of range");
  j = sample_json();
  j["images"][0]["events"][0]["device_ms"] = "fast";
  EXPECT_CONTAINS(parse_error(j), "events[0].device_ms: expected a number, got string");
  j = sample_json();
  j["images"][0]["events"][0].erase("rejected");
  EXPECT_CONTAINS(parse_error(j), "images[0].events[0]: missing \"rejected\"");
}

// The fuzzer's seed traces (fuzz/corpus/trace) are valid, so mutations start from real traces.
TEST(TraceReader, FuzzSeedsAreValid) {
  for (const char* name : {"two_by_two.json", "mulo_like.json"}) {
    const Trace t = read_trace(std::string(VKSPEC_SOURCE_DIR) + "/fuzz/corpus/trace/" + name);
    ASSERT_EQ(t.images.size(), 1u) << name;
    GridReplay replay(t.images[0].tokens);
    for (const StepEvent& e : t.images[0].events) replay.apply(e);
    EXPECT_EQ(replay.grid(), t.images[0].tokens) << name;
  }
}

TEST(TraceReader, SurvivesEveryTruncation) {
  const std::string text = sample_json().dump();
  for (size_t n = 0; n + 1 < text.size(); ++n) {
    try {
      parse_trace(text.substr(0, n), "cut.json");
      ADD_FAILURE() << "a trace cut at byte " << n << " parsed";
    } catch (const Error& e) {
      EXPECT_CONTAINS(e.what(), "cut.json");
    }
  }
}

}  // namespace
}  // namespace vkspec
