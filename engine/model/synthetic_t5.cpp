#include "engine/model/synthetic_t5.h"

#include "common/error.h"

namespace vkspec {
namespace {

struct T5Shape {
  const char* name;
  int64_t d_model, n_layer, n_head, d_kv, d_ff, vocab;
};
// config.json of google/flan-t5-xl, google/t5-v1_1-xl and google/t5-v1_1-xxl.
constexpr T5Shape kShapes[] = {{"flan-t5-xl", 2048, 24, 32, 64, 5120, 32128},
                               {"t5-v1_1-xl", 2048, 24, 32, 64, 5120, 32128},
                               {"t5-v1_1-xxl", 4096, 24, 64, 64, 10240, 32128},
                               {"t5-tiny", 64, 2, 4, 16, 96, 256}};

}  // namespace

const std::vector<std::string>& synthetic_t5_shapes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const T5Shape& s : kShapes) n.push_back(s.name);
    return n;
  }();
  return names;
}

SafetensorsWriter synthetic_t5(const std::string& name, uint64_t seed) {
  const T5Shape* shape = nullptr;
  for (const T5Shape& s : kShapes)
    if (name == s.name) shape = &s;
  if (!shape) throw Error("unknown T5 shape '" + name + "' (known: flan-t5-xl, t5-v1_1-xl, t5-v1_1-xxl, t5-tiny)");
  const T5Shape& s = *shape;
  const WeightFill fill = llamagen_init_fill(seed);
  SafetensorsWriter w;
  auto tensor = [&](const std::string& n, std::vector<int64_t> dims, bool f32) {
    add_synthetic_tensor(w, n, dims, f32, fill, StDType::F16);
  };
  const int64_t D = s.d_model, I = s.n_head * s.d_kv, F = s.d_ff;
  tensor("token_embeddings.weight", {s.vocab, D}, false);
  tensor("relative_attention_bias.weight", {32, s.n_head}, true);
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    tensor(p + "attention_norm.weight", {D}, true);
    tensor(p + "attention.wqkv.weight", {3 * I, D}, false);
    tensor(p + "attention.wo.weight", {D, I}, false);
    tensor(p + "ffn_norm.weight", {D}, true);
    tensor(p + "feed_forward.wi.weight", {2 * F, D}, false);
    tensor(p + "feed_forward.wo.weight", {D, F}, false);
  }
  tensor("final_norm.weight", {D}, true);
  const std::vector<std::pair<const char*, int64_t>> meta = {
      {"d_model", D}, {"n_layer", s.n_layer},  {"n_head", s.n_head}, {"d_kv", s.d_kv},
      {"d_ff", F},    {"vocab_size", s.vocab}, {"num_buckets", 32},  {"max_distance", 128}};
  for (const auto& [k, v] : meta) w.set_metadata(k, std::to_string(v));
  w.set_metadata("norm_eps", "1e-06");
  w.set_metadata("feed_forward_proj", "gated-gelu");
  w.set_metadata("vkspec.kind", "t5_encoder");
  w.set_metadata("source", "synthetic " + name);
  return w;
}

}  // namespace vkspec
