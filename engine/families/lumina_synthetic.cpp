#include "engine/families/lumina_synthetic.h"

#include "common/error.h"

namespace vkspec {

namespace {
struct Preset {
  const char* name;
  int64_t grid;
};
constexpr Preset kPresets[] = {{"lumina-mgpt-7b-512", 32}, {"lumina-mgpt-7b-768", 48}};

// Chameleon's layout ids (tools/lumina_model.py).
constexpr int64_t kBos = 0, kImageFirst = 4, kImageEnd = 8196, kImageStart = 8197, kSep = 8710;
constexpr int64_t kLineBreak = 8803, kSizeBase = 8804, kPatch = 32;
}  // namespace

bool is_lumina_mgpt_shape(const std::string& name) {
  for (const Preset& p : kPresets)
    if (name == p.name) return true;
  return false;
}

LuminaShape lumina_mgpt_shape(const std::string& name, int64_t prompt_tokens) {
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    LuminaShape s;
    s.dim = 4096;
    s.n_layer = 32;
    s.n_head = 32;
    s.ffn_hidden = 11008;
    s.text_vocab = 65536;
    s.image_codes = 8192;
    s.grid = p.grid;
    s.prompt_tokens = prompt_tokens;
    return s;
  }
  throw Error("unknown Lumina-mGPT shape '" + name + "' (known: lumina-mgpt-7b-512, lumina-mgpt-7b-768)");
}

SafetensorsWriter synthetic_lumina(const LuminaShape& s, const WeightFill& fill, StDType matrices) {
  if (s.text_vocab <= kSizeBase + s.grid / 2 || s.grid % 2)
    throw Error("a Lumina-mGPT shape needs an even grid and a text vocabulary past its size tokens");
  SafetensorsWriter w;
  auto tensor = [&](const std::string& name, std::vector<int64_t> shape, bool f32) {
    add_synthetic_tensor(w, name, shape, f32, fill, matrices);
  };
  const int64_t D = s.dim, hd = s.dim / s.n_head, G = s.qk_norm_groups;
  tensor("text_embeddings.weight", {s.text_vocab, D}, false);
  add_synthetic_blocks(w, D, s.n_layer, s.ffn_hidden, fill, matrices);
  for (int64_t l = 0; l < s.n_layer; ++l)
    for (const char* x : {"q", "k"})
      for (const char* part : {"weight", "bias"})
        tensor("layers." + std::to_string(l) + ".attention." + x + "_norm." + part, {G, hd}, true);
  tensor("norm.weight", {D}, true);
  tensor("image_embeddings.weight", {s.image_codes + 1, D}, false);
  tensor("output.weight", {s.image_codes, D}, false);
  const std::vector<std::pair<const char*, int64_t>> meta = {{"dim", D},
                                                             {"n_layer", s.n_layer},
                                                             {"n_head", s.n_head},
                                                             {"n_kv_head", s.n_head},
                                                             {"head_dim", hd},
                                                             {"ffn_hidden", s.ffn_hidden},
                                                             {"qk_norm_groups", G},
                                                             {"swin_norm", s.swin_norm ? 1 : 0},
                                                             {"vocab_size", s.image_codes},
                                                             {"text_vocab_size", s.text_vocab},
                                                             {"grid_size", s.grid},
                                                             {"cls_token_num", s.prompt_tokens},
                                                             {"placed_id", s.image_codes},
                                                             {"image_first_id", kImageFirst},
                                                             {"bos_id", kBos},
                                                             {"sep_id", kSep},
                                                             {"image_start_id", kImageStart},
                                                             {"image_end_id", kImageEnd},
                                                             {"line_break_id", kLineBreak},
                                                             {"size_base_id", kSizeBase},
                                                             {"size_patch", kPatch}};
  for (const auto& [k, value] : meta) w.set_metadata(k, std::to_string(value));
  w.set_metadata("prompt_template", "Generate an image of {w}x{h} according to the following prompt:\n{prompt}");
  w.set_metadata("vkspec.kind", "gpt");
  w.set_metadata("vkspec.family", "lumina-mgpt");
  return w;
}

}  // namespace vkspec
