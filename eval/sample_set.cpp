#include "eval/sample_set.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "engine/model/safetensors.h"
#include "engine/model/safetensors_writer.h"
#include "engine/vk/cache_file.h"
#include "common/error.h"

namespace vkspec {
namespace {

constexpr const char* kFormat = "vkspec-samples-1";

template <class T, class F>
std::vector<T> column(const std::vector<ImageRecord>& images, F get) {
  std::vector<T> v;
  v.reserve(images.size());
  for (const ImageRecord& r : images) v.push_back(static_cast<T>(get(r)));
  return v;
}

// width < 0: a vector of `rows` values; else a [rows, width] matrix.
template <class T>
std::vector<T> read_column(const SafetensorsFile& f, const std::string& name, StDType dtype, int64_t rows,
                           int64_t width = -1) {
  const StTensorInfo& info = f.info(name);
  const std::vector<int64_t> want = width >= 0 ? std::vector<int64_t>{rows, width} : std::vector<int64_t>{rows};
  if (info.dtype != dtype || info.shape != want)
    throw Error("sample file " + f.path() + ": tensor '" + name + "' is " + st_dtype_name(info.dtype) + " " +
                info.shape_str() + ", expected " + st_dtype_name(dtype) + " with " + std::to_string(rows) + " rows" +
                (width >= 0 ? " of " + std::to_string(width) : ""));
  std::vector<T> v(static_cast<size_t>(info.numel));
  if (!v.empty()) std::memcpy(v.data(), f.data(name), info.bytes());
  return v;
}

}  // namespace

const char* const ImageRecord::kStages[ImageRecord::kStageCount] = {"target", "drafter", "low_res", "heads",
                                                                    "sampling"};

void write_sample_set(const std::string& path, const SampleSet& set) {
  const auto& im = set.images;
  const int64_t n = static_cast<int64_t>(im.size());
  const int64_t tokens = n ? static_cast<int64_t>(im[0].tokens.size()) : 0;
  const int64_t dim = n ? static_cast<int64_t>(im[0].features.size()) : 0;
  std::vector<int32_t> grid;
  std::vector<float> features;
  std::vector<int64_t> work;
  for (const ImageRecord& r : im) {
    if (static_cast<int64_t>(r.tokens.size()) != tokens || static_cast<int64_t>(r.features.size()) != dim)
      throw Error("sample file " + path + ": images of different sizes in one run");
    grid.insert(grid.end(), r.tokens.begin(), r.tokens.end());
    features.insert(features.end(), r.features.begin(), r.features.end());
    for (uint64_t w : {r.work.dispatches, r.work.transfers, r.work.barriers, r.work.submits})
      work.push_back(static_cast<int64_t>(w));
  }
  SafetensorsWriter w;
  w.set_metadata("format", kFormat);
  for (const auto& [k, v] : set.meta) w.set_metadata(k, v);
  auto add_i64 = [&](const char* name, const std::vector<int64_t>& v, std::vector<int64_t> shape) {
    w.add(name, StDType::I64, shape, v.data(), v.size() * sizeof(int64_t));
  };
  add_i64("seed", column<int64_t>(im, [](const ImageRecord& r) { return r.seed; }), {n});
  add_i64("class", column<int64_t>(im, [](const ImageRecord& r) { return r.class_id; }), {n});
  add_i64("predicted", column<int64_t>(im, [](const ImageRecord& r) { return r.predicted; }), {n});
  add_i64("nfe", column<int64_t>(im, [](const ImageRecord& r) { return r.nfe; }), {n});
  add_i64("draft_forwards", column<int64_t>(im, [](const ImageRecord& r) { return r.draft_forwards; }), {n});
  add_i64("islands", column<int64_t>(im, [](const ImageRecord& r) { return r.islands; }), {n});
  add_i64("head_forwards", column<int64_t>(im, [](const ImageRecord& r) { return r.head_forwards; }), {n});
  std::vector<float> stages;
  for (const ImageRecord& r : im)
    for (double v : r.stage_ms) stages.push_back(static_cast<float>(v));
  w.add_f32("stage_ms", {n, ImageRecord::kStageCount}, stages);
  add_i64("work", work, {n, 4});
  w.add("tokens", StDType::I32, {n, tokens}, grid.data(), grid.size() * sizeof(int32_t));
  w.add_f32("features", {n, dim}, features);
  w.add_f32("wall_ms", {n}, column<float>(im, [](const ImageRecord& r) { return r.wall_ms; }));
  w.add_f32("busy_ms", {n}, column<float>(im, [](const ImageRecord& r) { return r.busy_ms; }));
  w.add_f32("device_ms", {n}, column<float>(im, [](const ImageRecord& r) { return r.device_ms; }));
  w.write(path);
}

SampleSet read_sample_set(const std::string& path) {
  const SafetensorsFile f(path);
  if (!f.has_meta("format") || f.meta("format") != kFormat)
    throw Error("sample file " + path + ": not a vkspec sample file (metadata format != " + kFormat + ")");
  SampleSet set;
  set.sources = {path};
  for (const auto& [k, v] : f.metadata())
    if (k != "format") set.meta[k] = v;
  for (const char* k : {"method", "options", "models", "sampler", "classifier", "device"})
    if (!set.meta.count(k)) throw Error("sample file " + path + ": metadata has no '" + k + "'");
  const StTensorInfo& seeds = f.info("seed");
  if (seeds.shape.size() != 1) throw Error("sample file " + path + ": tensor 'seed' is not a vector");
  const int64_t n = seeds.shape[0];
  const StTensorInfo& tok = f.info("tokens");
  const StTensorInfo& feat = f.info("features");
  if (tok.shape.size() != 2 || feat.shape.size() != 2)
    throw Error("sample file " + path + ": 'tokens' and 'features' must be matrices");
  const int64_t tokens = tok.shape[1], dim = feat.shape[1];
  const auto seed = read_column<int64_t>(f, "seed", StDType::I64, n);
  const auto cls = read_column<int64_t>(f, "class", StDType::I64, n);
  const auto predicted = read_column<int64_t>(f, "predicted", StDType::I64, n);
  const auto nfe = read_column<int64_t>(f, "nfe", StDType::I64, n);
  const auto drafts = read_column<int64_t>(f, "draft_forwards", StDType::I64, n);
  const auto islands = read_column<int64_t>(f, "islands", StDType::I64, n);
  const auto work = read_column<int64_t>(f, "work", StDType::I64, n, 4);
  const auto grid = read_column<int32_t>(f, "tokens", StDType::I32, n, tokens);
  const auto features = read_column<float>(f, "features", StDType::F32, n, dim);
  const auto wall = read_column<float>(f, "wall_ms", StDType::F32, n);
  const auto busy = read_column<float>(f, "busy_ms", StDType::F32, n);
  const auto device = read_column<float>(f, "device_ms", StDType::F32, n);
  // Columns added later: older files read as zeros.
  const auto heads = f.has("head_forwards") ? read_column<int64_t>(f, "head_forwards", StDType::I64, n)
                                            : std::vector<int64_t>(static_cast<size_t>(n), 0);
  const int64_t S = ImageRecord::kStageCount;
  const auto stages = f.has("stage_ms") ? read_column<float>(f, "stage_ms", StDType::F32, n, S)
                                        : std::vector<float>(static_cast<size_t>(n * S), 0.0f);
  set.images.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    ImageRecord& r = set.images[static_cast<size_t>(i)];
    const size_t u = static_cast<size_t>(i);
    r.seed = static_cast<uint64_t>(seed[u]);
    r.class_id = cls[u];
    r.predicted = predicted[u];
    r.nfe = nfe[u];
    r.draft_forwards = drafts[u];
    r.islands = islands[u];
    r.work = {static_cast<uint64_t>(work[4 * u]), static_cast<uint64_t>(work[4 * u + 1]),
              static_cast<uint64_t>(work[4 * u + 2]), static_cast<uint64_t>(work[4 * u + 3])};
    r.tokens.assign(grid.begin() + i * tokens, grid.begin() + (i + 1) * tokens);
    r.features.assign(features.begin() + i * dim, features.begin() + (i + 1) * dim);
    r.wall_ms = wall[u];
    r.busy_ms = busy[u];
    r.device_ms = device[u];
    r.head_forwards = heads[u];
    r.stage_ms.assign(stages.begin() + i * S, stages.begin() + (i + 1) * S);
  }
  return set;
}

std::string sample_set_key(const SampleSet& set) {
  std::string key;
  for (const auto& [k, v] : set.meta)
    if (k != "device" && k != "run_seeds") key += k + "=" + v + "\n";
  return key;
}

std::vector<SampleSet> merge_sample_sets(std::vector<SampleSet> sets) {
  std::vector<SampleSet> groups;
  std::vector<std::map<uint64_t, std::string>> seen;  // per group: seed -> file
  for (SampleSet& s : sets) {
    const std::string key = sample_set_key(s);
    size_t g = 0;
    while (g < groups.size() && sample_set_key(groups[g]) != key) ++g;
    if (g == groups.size()) {
      groups.push_back({s.meta, {}, {}});
      seen.emplace_back();
    }
    SampleSet& into = groups[g];
    const std::string source = s.sources.empty() ? "(memory)" : s.sources.front();
    for (ImageRecord& r : s.images) {
      auto [it, fresh] = seen[g].emplace(r.seed, source);
      if (!fresh)
        throw Error("samples: seed " + std::to_string(r.seed) + " of " + s.meta["method"] +
                    (s.meta["options"].empty() ? "" : " " + s.meta["options"]) + " is in both " + it->second + " and " +
                    source + " (the same image twice would bias the statistics)");
      into.images.push_back(std::move(r));
    }
    into.sources.insert(into.sources.end(), s.sources.begin(), s.sources.end());
    // Devices and the runs the files belong to are listed, each once.
    for (const char* listed : {"device", "run_seeds"}) {
      const std::string& v = s.meta[listed];
      std::string& list = into.meta[listed];
      if (v.empty() || ("; " + list + "; ").find("; " + v + "; ") != std::string::npos) continue;
      list += (list.empty() ? "" : "; ") + v;
    }
  }
  for (SampleSet& g : groups)
    std::sort(g.images.begin(), g.images.end(),
              [](const ImageRecord& a, const ImageRecord& b) { return a.seed < b.seed; });
  return groups;
}

std::string file_identity(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path + " to identify it");
  uint64_t h = cache_hash(nullptr, 0);
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    h = cache_hash(chunk.data(), static_cast<size_t>(in.gcount()), h);
  }
  char hex[24];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  const size_t slash = path.find_last_of('/');
  return (slash == std::string::npos ? path : path.substr(slash + 1)) + "#" + hex;
}

}  // namespace vkspec
