#include "engine/model/synthetic_gpt.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "engine/model/gpt_config.h"
#include "common/error.h"

namespace vkspec {

GptShape llamagen_shape(const std::string& name, int64_t grid) {
  struct Preset {
    const char* name;
    int64_t dim, n_layer, n_head;
  };
  static const Preset kPresets[] = {{"B", 768, 12, 12}, {"L", 1024, 24, 16}, {"XL", 1280, 36, 20}};
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    GptShape s;
    s.dim = p.dim;
    s.n_layer = p.n_layer;
    s.n_head = p.n_head;
    s.vocab_size = 16384;
    s.num_classes = 1000;
    s.grid_size = grid;
    s.ffn_hidden = GptConfig::llamagen_ffn_hidden(s.dim);
    return s;
  }
  throw Error("unknown LlamaGen GPT shape '" + name + "' (known: B, L, XL)");
}

void add_synthetic_tensor(SafetensorsWriter& w, const std::string& name, const std::vector<int64_t>& shape,
                          bool is_norm, const WeightFill& fill, StDType matrices) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n), 0.0f);
  fill(name, is_norm, v);
  w.add_f32(name, shape, v, is_norm ? StDType::F32 : matrices);
}

void add_synthetic_blocks(SafetensorsWriter& w, int64_t D, int64_t n_layer, int64_t H, const WeightFill& fill,
                          StDType matrices, const std::string& prefix) {
  for (int64_t l = 0; l < n_layer; ++l) {
    const std::string p = prefix + std::to_string(l) + ".";
    add_synthetic_tensor(w, p + "attention_norm.weight", {D}, true, fill, matrices);
    add_synthetic_tensor(w, p + "ffn_norm.weight", {D}, true, fill, matrices);
    add_synthetic_tensor(w, p + "attention.wqkv.weight", {3 * D, D}, false, fill, matrices);
    add_synthetic_tensor(w, p + "attention.wo.weight", {D, D}, false, fill, matrices);
    add_synthetic_tensor(w, p + "feed_forward.w1.weight", {H, D}, false, fill, matrices);
    add_synthetic_tensor(w, p + "feed_forward.w3.weight", {H, D}, false, fill, matrices);
    add_synthetic_tensor(w, p + "feed_forward.w2.weight", {D, H}, false, fill, matrices);
  }
}

SafetensorsWriter synthetic_gpt(const GptShape& s, const WeightFill& fill, StDType matrices) {
  SafetensorsWriter w;
  auto tensor = [&](const std::string& name, std::vector<int64_t> shape, bool is_norm) {
    add_synthetic_tensor(w, name, shape, is_norm, fill, matrices);
  };
  const int64_t D = s.dim, H = s.ffn_hidden;
  tensor("tok_embeddings.weight", {s.vocab_size, D}, false);
  const bool t2i = s.caption_dim > 0;
  if (t2i) {
    tensor("cls_embedding.cap_proj.fc1.weight", {D, s.caption_dim}, false);
    tensor("cls_embedding.cap_proj.fc2.weight", {D, D}, false);
    tensor("cls_embedding.uncond_embedding", {s.cls_token_num, s.caption_dim}, false);
  } else {
    tensor("cls_embedding.embedding_table.weight", {s.num_classes + 1, D}, false);
  }
  add_synthetic_blocks(w, D, s.n_layer, H, fill, matrices);
  tensor("norm.weight", {D}, true);
  tensor("output.weight", {s.vocab_size, D}, false);
  std::vector<std::pair<const char*, int64_t>> meta = {{"dim", D},
                                                       {"n_layer", s.n_layer},
                                                       {"n_head", s.n_head},
                                                       {"vocab_size", s.vocab_size},
                                                       {"num_classes", s.num_classes},
                                                       {"grid_size", s.grid_size},
                                                       {"cls_token_num", t2i ? s.cls_token_num : 1},
                                                       {"ffn_hidden", H}};
  if (t2i) meta.push_back({"caption_dim", s.caption_dim});
  for (const auto& [k, value] : meta) w.set_metadata(k, std::to_string(value));
  if (t2i) w.set_metadata("model_type", "t2i");
  w.set_metadata("vkspec.kind", "gpt");
  return w;
}

WeightFill llamagen_init_fill(uint64_t seed) {
  // splitmix64: one 64-bit step gives four 16-bit uniforms; the state runs through the whole
  // model in tensor order, so the weights depend on the seed and the shape only.
  auto state = std::make_shared<uint64_t>(seed);
  return [state](const std::string&, bool is_norm, std::vector<float>& values) {
    if (is_norm) {
      for (float& x : values) x = 1.0f;
      return;
    }
    const float half_width = 0.02f * std::sqrt(3.0f);  // uniform on [-a, a] has std a / sqrt(3)
    const float step = 2.0f * half_width / 65536.0f;
    uint64_t bits = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (i % 4 == 0) {
        uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        bits = z ^ (z >> 31);
      }
      values[i] = -half_width + step * (static_cast<float>(bits & 0xffffu) + 0.5f);
      bits >>= 16;
    }
  };
}

WeightFill zero_bias_init_fill(uint64_t seed) {
  const WeightFill init = llamagen_init_fill(seed);
  return [init](const std::string& tensor, bool f32, std::vector<float>& v) {
    if (tensor.size() > 5 && tensor.compare(tensor.size() - 5, 5, ".bias") == 0)
      std::fill(v.begin(), v.end(), 0.0f);
    else
      init(tensor, f32, v);
  };
}

}  // namespace vkspec
