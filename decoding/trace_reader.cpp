#include "decoding/trace_reader.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "common/error.h"

namespace vkspec {
namespace {

using json = nlohmann::json;

// Deeper nesting than a trace has is rejected before parsing, so hostile input cannot exhaust the
// stack of any recursive walk over the document.
constexpr int kMaxDepth = 16;
// A generous bound on steps per image (lossless methods commit at least one token per step).
constexpr int64_t kStepsPerToken = 16;
constexpr double kMaxMs = 1e12;

// Every accessor names the field path ("images[0].events[3].accepted[2]") in its error.
class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw Error("trace " + origin_ + ": " + (where.empty() ? "" : where + ": ") + what);
  }

  const json& member(const json& obj, const std::string& where, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(where, std::string("missing \"") + key + "\"");
    return *it;
  }
  const json& object(const json& j, const std::string& where) const {
    if (!j.is_object()) fail(where, std::string("expected an object, got ") + j.type_name());
    return j;
  }
  const json& array(const json& j, const std::string& where, size_t max_size) const {
    if (!j.is_array()) fail(where, std::string("expected an array, got ") + j.type_name());
    if (j.size() > max_size)
      fail(where, std::to_string(j.size()) + " entries, more than the " + std::to_string(max_size) + " allowed");
    return j;
  }
  int64_t integer(const json& j, const std::string& where, int64_t lo, int64_t hi) const {
    int64_t v = 0;
    if (j.is_number_unsigned()) {
      const uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(hi)) fail(where, std::to_string(u) + " is out of range " + range(lo, hi));
      v = static_cast<int64_t>(u);
    } else if (j.is_number_integer()) {
      v = j.get<int64_t>();
    } else {
      fail(where, std::string("expected an integer, got ") + j.type_name());
    }
    if (v < lo || v > hi) fail(where, std::to_string(v) + " is out of range " + range(lo, hi));
    return v;
  }
  uint64_t unsigned_integer(const json& j, const std::string& where) const {
    if (j.is_number_unsigned()) return j.get<uint64_t>();
    if (j.is_number_integer()) fail(where, std::to_string(j.get<int64_t>()) + " is negative");
    fail(where, std::string("expected a non-negative integer, got ") + j.type_name());
  }
  double number(const json& j, const std::string& where, double lo, double hi) const {
    if (!j.is_number()) fail(where, std::string("expected a number, got ") + j.type_name());
    const double v = j.get<double>();
    if (!std::isfinite(v) || v < lo || v > hi) {
      std::ostringstream o;
      o << v << " is out of range [" << lo << ", " << hi << "]";
      fail(where, o.str());
    }
    return v;
  }
  std::string string(const json& j, const std::string& where, size_t max_size) const {
    if (!j.is_string()) fail(where, std::string("expected a string, got ") + j.type_name());
    const std::string& s = j.get_ref<const std::string&>();
    if (s.size() > max_size) fail(where, "string longer than " + std::to_string(max_size) + " characters");
    return s;
  }
  // Image-token positions in [0, tokens).
  std::vector<int32_t> positions(const json& j, const std::string& where, int64_t tokens) const {
    array(j, where, static_cast<size_t>(tokens));
    std::vector<int32_t> out;
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i)
      out.push_back(static_cast<int32_t>(integer(j[i], where + "[" + std::to_string(i) + "]", 0, tokens - 1)));
    return out;
  }

 private:
  static std::string range(int64_t lo, int64_t hi) {
    return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  }
  std::string origin_;
};

void check_depth(const std::string& text, const Reader& r) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        r.fail("", "nested deeper than " + std::to_string(kMaxDepth) + " levels at byte " + std::to_string(i));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

TraceConfig read_config(const Reader& r, const json& root) {
  const json& c = r.object(r.member(root, "", "config"), "config");
  TraceConfig cfg;
  cfg.model = r.string(r.member(c, "config", "model"), "config.model", 4096);
  cfg.grid_size = r.integer(r.member(c, "config", "grid_size"), "config.grid_size", 1, kTraceMaxGridSize);
  cfg.vocab_size = r.integer(r.member(c, "config", "vocab_size"), "config.vocab_size", 1, kTraceMaxVocab);
  cfg.sampler.cfg = static_cast<float>(r.number(r.member(c, "config", "cfg"), "config.cfg", 0, 100));
  cfg.sampler.temperature =
      static_cast<float>(r.number(r.member(c, "config", "temperature"), "config.temperature", 0, 100));
  cfg.sampler.top_k = r.integer(r.member(c, "config", "top_k"), "config.top_k", 0, kTraceMaxVocab);
  cfg.sampler.top_p = static_cast<float>(r.number(r.member(c, "config", "top_p"), "config.top_p", 0, 1));
  if (c.contains("entropy_temperature")) {
    const char* w = "config.entropy_temperature";
    const json& e = r.object(r.member(c, "config", "entropy_temperature"), w);
    cfg.sampler.entropy.on = true;
    cfg.sampler.entropy.a = static_cast<float>(r.number(r.member(e, w, "a"), std::string(w) + ".a", 0, 100));
    cfg.sampler.entropy.b = static_cast<float>(r.number(r.member(e, w, "b"), std::string(w) + ".b", 1e-3, 1e3));
    cfg.sampler.entropy.c = static_cast<float>(r.number(r.member(e, w, "c"), std::string(w) + ".c", 0, 100));
  }
  try {
    cfg.sampler.validate();
  } catch (const Error& e) {
    r.fail("config", e.what());
  }
  const json& opts = r.object(r.member(c, "config", "options"), "config.options");
  if (opts.size() > 256) r.fail("config.options", "more than 256 options");
  for (auto it = opts.begin(); it != opts.end(); ++it) {
    if (it.key().empty() || it.key().size() > 64) r.fail("config.options", "option name empty or too long");
    cfg.options[it.key()] = r.string(it.value(), "config.options." + it.key(), 4096);
  }
  return cfg;
}

StepEvent read_event(const Reader& r, const json& j, const std::string& w, int64_t tokens, int64_t vocab) {
  r.object(j, w);
  StepEvent e;
  e.step = r.integer(r.member(j, w, "step"), w + ".step", 0, INT64_MAX);
  e.proposed = r.positions(r.member(j, w, "proposed"), w + ".proposed", tokens);
  const json& pt = r.array(r.member(j, w, "proposed_tokens"), w + ".proposed_tokens", static_cast<size_t>(tokens));
  if (pt.size() != e.proposed.size())
    r.fail(w + ".proposed_tokens",
           std::to_string(pt.size()) + " tokens for " + std::to_string(e.proposed.size()) + " proposed positions");
  for (size_t i = 0; i < pt.size(); ++i)
    e.proposed_tokens.push_back(static_cast<int32_t>(r.integer(pt[i], w + ".proposed_tokens[" + std::to_string(i) + "]",
                                                               0, vocab - 1)));
  e.accepted = r.positions(r.member(j, w, "accepted"), w + ".accepted", tokens);
  e.rejected = r.positions(r.member(j, w, "rejected"), w + ".rejected", tokens);
  e.resampled = r.positions(r.member(j, w, "resampled"), w + ".resampled", tokens);
  const json& isl = r.array(r.member(j, w, "islands"), w + ".islands", static_cast<size_t>(tokens));
  for (size_t i = 0; i < isl.size(); ++i) {
    const std::string wi = w + ".islands[" + std::to_string(i) + "]";
    e.islands.push_back(r.positions(isl[i], wi, tokens));
    if (e.islands.back().empty()) r.fail(wi, "an island has no positions");
  }
  if (j.contains("groups")) {  // optional: written by the methods that verify groups
    const json& g = r.array(j.at("groups"), w + ".groups", static_cast<size_t>(tokens));
    for (size_t i = 0; i < g.size(); ++i) {
      const std::string wi = w + ".groups[" + std::to_string(i) + "]";
      e.groups.push_back(r.positions(g[i], wi, tokens));
      if (e.groups.back().empty()) r.fail(wi, "a group has no positions");
    }
  }
  if (j.contains("tree_size")) {  // optional: adaptive trees' depth and width
    const json& t = r.array(j.at("tree_size"), w + ".tree_size", 2);
    if (t.size() != 2) r.fail(w + ".tree_size", "needs [depth, width]");
    e.tree_depth = static_cast<int32_t>(r.integer(t[0], w + ".tree_size[0]", 1, 1 << 16));
    e.tree_width = static_cast<int32_t>(r.integer(t[1], w + ".tree_size[1]", 1, 1 << 16));
  }
  if (j.contains("verified")) {  // optional: false for a step without a target forward
    if (!j.at("verified").is_boolean()) r.fail(w + ".verified", "must be true or false");
    e.verified = j.at("verified").get<bool>();
  }
  if (j.contains("gates")) {  // optional: flashar's head weights, one per accepted position
    const json& g = r.array(j.at("gates"), w + ".gates", static_cast<size_t>(tokens));
    if (g.size() != e.accepted.size())
      r.fail(w + ".gates",
             std::to_string(g.size()) + " gates for " + std::to_string(e.accepted.size()) + " accepted positions");
    for (size_t i = 0; i < g.size(); ++i)
      e.gates.push_back(static_cast<float>(r.number(g[i], w + ".gates[" + std::to_string(i) + "]", 0, 1)));
  }
  e.committed = r.integer(r.member(j, w, "committed"), w + ".committed", 0, tokens);
  e.nfe = r.integer(r.member(j, w, "nfe"), w + ".nfe", 0, INT64_MAX);
  e.draft_forwards = r.integer(r.member(j, w, "draft_forwards"), w + ".draft_forwards", 0, INT64_MAX);
  e.device_ms = r.number(r.member(j, w, "device_ms"), w + ".device_ms", 0, kMaxMs);
  e.wall_ms = r.number(r.member(j, w, "wall_ms"), w + ".wall_ms", 0, kMaxMs);
  return e;
}

Generation read_image(const Reader& r, const json& im, const std::string& w, const TraceConfig& cfg) {
  r.object(im, w);
  const int64_t G = cfg.grid_size, T = G * G;
  Generation g;
  g.method = r.string(r.member(im, w, "method"), w + ".method", 64);
  if (g.method.empty()) r.fail(w + ".method", "empty method name");
  // Images of a caption-conditioned model have no class.
  g.class_id = im.contains("class") ? r.integer(r.member(im, w, "class"), w + ".class", 0, INT32_MAX) : -1;
  if (im.contains("condition")) g.condition = r.string(r.member(im, w, "condition"), w + ".condition", 4096);
  if (im.contains("prompt")) g.prompt = r.string(r.member(im, w, "prompt"), w + ".prompt", 1 << 16);
  if (g.class_id < 0 && g.condition.empty()) r.fail(w, "neither a class nor a condition");
  g.seed = r.unsigned_integer(r.member(im, w, "seed"), w + ".seed");
  g.nfe = r.integer(r.member(im, w, "nfe"), w + ".nfe", 0, INT64_MAX);
  g.draft_forwards = r.integer(r.member(im, w, "draft_forwards"), w + ".draft_forwards", 0, INT64_MAX);
  g.wall_ms = r.number(r.member(im, w, "wall_ms"), w + ".wall_ms", 0, kMaxMs);
  g.device_ms = r.number(r.member(im, w, "device_ms"), w + ".device_ms", 0, kMaxMs);

  const json& rows = r.array(r.member(im, w, "tokens"), w + ".tokens", static_cast<size_t>(G));
  if (static_cast<int64_t>(rows.size()) != G)
    r.fail(w + ".tokens", std::to_string(rows.size()) + " rows, the grid has " + std::to_string(G));
  g.tokens.reserve(static_cast<size_t>(T));
  for (size_t y = 0; y < rows.size(); ++y) {
    const std::string wy = w + ".tokens[" + std::to_string(y) + "]";
    const json& row = r.array(rows[y], wy, static_cast<size_t>(G));
    if (static_cast<int64_t>(row.size()) != G)
      r.fail(wy, std::to_string(row.size()) + " tokens, the grid is " + std::to_string(G) + " wide");
    for (size_t x = 0; x < row.size(); ++x)
      g.tokens.push_back(static_cast<int32_t>(r.integer(row[x], wy + "[" + std::to_string(x) + "]", 0,
                                                        cfg.vocab_size - 1)));
  }

  const json& events = r.array(r.member(im, w, "events"), w + ".events", static_cast<size_t>(kStepsPerToken * T + 64));
  GridReplay replay(g.tokens);
  int64_t committed = 0, nfe = 0, drafts = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string we = w + ".events[" + std::to_string(i) + "]";
    StepEvent e = read_event(r, events[i], we, T, cfg.vocab_size);
    if (e.step != static_cast<int64_t>(i))
      r.fail(we + ".step", std::to_string(e.step) + ", expected " + std::to_string(i));
    if (committed == T) r.fail(we, "the image was already complete at the previous step");
    if (e.committed < committed)
      r.fail(we + ".committed",
             std::to_string(e.committed) + " is less than the previous step's " + std::to_string(committed));
    if (e.nfe < nfe)
      r.fail(we + ".nfe", std::to_string(e.nfe) + " is less than the previous step's " + std::to_string(nfe));
    if (e.draft_forwards < drafts)
      r.fail(we + ".draft_forwards", "decreases from the previous step's " + std::to_string(drafts));
    committed = e.committed, nfe = e.nfe, drafts = e.draft_forwards;
    try {
      replay.apply(e);
    } catch (const Error& err) {
      r.fail(we, err.what());
    }
    e.done = committed == T;
    g.events.push_back(std::move(e));
  }
  if (!g.events.empty()) {
    if (committed != T)
      r.fail(w + ".events", "the last step commits " + std::to_string(committed) + " of " + std::to_string(T) +
                                " tokens; the image is incomplete");
    if (nfe != g.nfe)
      r.fail(w + ".nfe", std::to_string(g.nfe) + " differs from the last step's " + std::to_string(nfe));
    if (drafts != g.draft_forwards)
      r.fail(w + ".draft_forwards",
             std::to_string(g.draft_forwards) + " differs from the last step's " + std::to_string(drafts));
  }
  return g;
}

}  // namespace

Trace parse_trace(const std::string& text, const std::string& origin) {
  const Reader r(origin);
  check_depth(text, r);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers past a double
    r.fail("", std::string("not valid JSON (") + e.what() + ")");
  }
  r.object(root, "the document");
  const json& format = r.member(root, "", "format");
  const std::string f = r.string(format, "format", 64);
  if (f != "vkspec-trace-1") r.fail("format", "'" + f + "' is not a trace format this build reads (vkspec-trace-1)");

  Trace t;
  t.config = read_config(r, root);
  const json& images = r.array(r.member(root, "", "images"), "images", 100000);
  if (images.empty()) r.fail("images", "the trace holds no images");
  for (size_t i = 0; i < images.size(); ++i)
    t.images.push_back(read_image(r, images[i], "images[" + std::to_string(i) + "]", t.config));
  return t;
}

Trace read_trace(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) throw Error("trace " + path + ": no such file");
  if (!S_ISREG(st.st_mode)) throw Error("trace " + path + ": not a regular file");
  if (static_cast<uint64_t>(st.st_size) > kTraceMaxBytes)
    throw Error("trace " + path + ": " + std::to_string(st.st_size) + " bytes, larger than the " +
                std::to_string(kTraceMaxBytes >> 20) + " MiB a trace may have");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("trace " + path + ": cannot be opened");
  std::ostringstream text;
  text << f.rdbuf();
  if (f.bad()) throw Error("trace " + path + ": read error");
  return parse_trace(text.str(), path);
}

GridReplay::GridReplay(std::vector<int32_t> final_tokens)
    : final_(std::move(final_tokens)), grid_(final_.size(), kUndecided) {}

void GridReplay::reset() {
  std::fill(grid_.begin(), grid_.end(), kUndecided);
  decided_ = 0;
  next_raster_ = 0;
}

const std::vector<int32_t>& GridReplay::apply(const StepEvent& e) {
  for (const auto* list : {&e.accepted, &e.resampled})
    for (int32_t p : *list) {
      if (p < 0 || static_cast<size_t>(p) >= grid_.size())
        throw Error("position " + std::to_string(p) + " outside the " + std::to_string(grid_.size()) + "-token grid");
      if (grid_[static_cast<size_t>(p)] == kUndecided) {
        grid_[static_cast<size_t>(p)] = final_[static_cast<size_t>(p)];
        ++decided_;
      }
    }
  if (decided_ > e.committed)
    throw Error("lists " + std::to_string(decided_) +
                " committed positions (accepted or resampled) but its committed "
                "count is " +
                std::to_string(e.committed));
  if (e.committed > static_cast<int64_t>(grid_.size()))
    throw Error("committed count " + std::to_string(e.committed) + " exceeds the grid");
  while (decided_ < e.committed) {
    while (grid_[next_raster_] != kUndecided) ++next_raster_;
    grid_[next_raster_] = final_[next_raster_];
    ++decided_;
  }
  return grid_;
}

}  // namespace vkspec
