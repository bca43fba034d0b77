#include "engine/families/janus_synthetic.h"

#include "common/error.h"

namespace vkspec {

namespace {
struct Preset {
  const char* name;
  int64_t dim, n_layer, n_head, ffn_hidden;
};
constexpr Preset kPresets[] = {{"janus-pro-1b", 2048, 24, 16, 5632}, {"janus-pro-7b", 4096, 30, 32, 11008}};
}  // namespace

bool is_janus_pro_shape(const std::string& name) {
  for (const Preset& p : kPresets)
    if (name == p.name) return true;
  return false;
}

JanusShape janus_pro_shape(const std::string& name, int64_t prompt_tokens) {
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    JanusShape s;
    s.dim = p.dim;
    s.n_layer = p.n_layer;
    s.n_head = p.n_head;
    s.ffn_hidden = p.ffn_hidden;
    s.text_vocab = 102400;
    s.image_vocab = 16384;
    s.grid = 24;
    s.head_hidden = p.dim;
    s.prompt_tokens = prompt_tokens;
    return s;
  }
  throw Error("unknown Janus-Pro shape '" + name + "' (known: janus-pro-1b, janus-pro-7b)");
}

SafetensorsWriter synthetic_janus(const JanusShape& s, const WeightFill& fill, StDType matrices) {
  SafetensorsWriter w;
  auto tensor = [&](const std::string& name, std::vector<int64_t> shape, bool f32) {
    add_synthetic_tensor(w, name, shape, f32, fill, matrices);
  };
  const int64_t D = s.dim, H = s.ffn_hidden, E = s.image_embed_dim, Hh = s.head_hidden, V = s.image_vocab;
  tensor("text_embeddings.weight", {s.text_vocab, D}, false);
  add_synthetic_blocks(w, D, s.n_layer, H, fill, matrices);
  tensor("norm.weight", {D}, true);
  tensor("gen_embed.weight", {V, E}, false);
  tensor("gen_aligner.layers.0.weight", {D, E}, false);
  tensor("gen_aligner.layers.0.bias", {D}, true);
  tensor("gen_aligner.layers.2.weight", {D, D}, false);
  tensor("gen_aligner.layers.2.bias", {D}, true);
  tensor("gen_head.output_mlp_projector.weight", {Hh, D}, false);
  tensor("gen_head.output_mlp_projector.bias", {Hh}, true);
  tensor("gen_head.vision_head.weight", {V, Hh}, false);
  tensor("gen_head.vision_head.bias", {V}, true);
  const std::vector<std::pair<const char*, int64_t>> meta = {{"dim", D},
                                                             {"n_layer", s.n_layer},
                                                             {"n_head", s.n_head},
                                                             {"n_kv_head", s.n_head},
                                                             {"ffn_hidden", H},
                                                             {"vocab_size", V},
                                                             {"text_vocab_size", s.text_vocab},
                                                             {"grid_size", s.grid},
                                                             {"cls_token_num", s.prompt_tokens},
                                                             {"image_embed_dim", E},
                                                             {"head_hidden", Hh},
                                                             {"bos_id", s.text_vocab - 3},
                                                             {"pad_id", s.text_vocab - 2},
                                                             {"image_start_id", s.text_vocab - 1}};
  for (const auto& [k, value] : meta) w.set_metadata(k, std::to_string(value));
  w.set_metadata("prompt_template", "<|User|>: {prompt}\n\n<|Assistant|>:<begin_of_image>");
  w.set_metadata("vkspec.kind", "gpt");
  w.set_metadata("vkspec.family", "janus-pro");
  return w;
}

}  // namespace vkspec
