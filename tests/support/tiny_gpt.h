#pragma once
// Small random LlamaGen-layout GPTs written from C++ (no PyTorch needed), for the statistical tests
// of the decoding strategies: a few tokens per image and a handful of token ids, so thousands of
// images take seconds. With the default scale a 3x3, vocabulary-8 model has several likely tokens
// per position whose probabilities depend strongly on the tokens before it (larger scales make
// the distributions nearly deterministic).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/families/janus_synthetic.h"
#include "engine/families/lumina_prompt.h"
#include "engine/families/lumina_synthetic.h"
#include "engine/model/condition.h"
#include "engine/model/safetensors.h"
#include "engine/model/safetensors_writer.h"
#include "engine/model/synthetic_gpt.h"
#include "engine/ops/philox.h"

namespace vkspec::testing {

struct TinyGptSpec {
  int64_t dim = 32, layers = 1, heads = 2, vocab = 8, classes = 2, grid = 3, ffn_hidden = 64;
  float scale = 0.2f;  // standard deviation of the matrices (norm weights are 1 +- 0.1)
  // Of the image-token embeddings (0: scale). Larger than scale, the token fed dominates the
  // residual stream, so each next token's distribution depends strongly on the one before it.
  float embed_scale = 0.0f;
  uint64_t seed = 1;
  // A second model close to the first (a drafter that is often right): the same weights plus
  // noise_scale * N(0, 1) drawn with noise_seed (0: no noise).
  uint64_t noise_seed = 0;
  float noise_scale = 0.0f;
  // caption_dim > 0: a text-to-image model with cls_token_num caption positions (classes unused).
  int64_t caption_dim = 0, cls_token_num = 1;
};

// Normal variates from Philox (Box-Muller), so the same file comes out on every platform.
class TinyNormal {
 public:
  explicit TinyNormal(uint64_t seed) : seed_(seed) {}
  float next() {
    const float u1 = std::max(philox::uniform(seed_, 0, static_cast<uint32_t>(philox::Purpose::Test), n_++), 1e-7f);
    const float u2 = philox::uniform(seed_, 0, static_cast<uint32_t>(philox::Purpose::Test), n_++);
    return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.28318530718f * u2);
  }

 private:
  uint64_t seed_;
  uint32_t n_ = 0;
};

// The tensors and metadata of write_tiny_gpt's file.
inline SafetensorsWriter tiny_gpt_writer(const TinyGptSpec& s) {
  TinyNormal rng(s.seed), noise(s.noise_seed);
  GptShape shape;
  shape.dim = s.dim;
  shape.n_layer = s.layers;
  shape.n_head = s.heads;
  shape.vocab_size = s.vocab;
  shape.num_classes = s.classes;
  shape.grid_size = s.grid;
  shape.ffn_hidden = s.ffn_hidden;
  shape.caption_dim = s.caption_dim;
  shape.cls_token_num = s.cls_token_num;
  if (s.caption_dim > 0) shape.num_classes = 0;
  auto fill = [&](const std::string& name, bool is_norm, std::vector<float>& v) {
    const float sd = name == "tok_embeddings.weight" && s.embed_scale > 0 ? s.embed_scale : s.scale;
    for (float& x : v)
      x = is_norm ? 1.0f + 0.1f * rng.next() : sd * rng.next() + (s.noise_seed ? s.noise_scale * noise.next() : 0.0f);
  };
  return synthetic_gpt(shape, fill, StDType::F32);
}

inline void write_tiny_gpt(const std::string& path, const TinyGptSpec& s,
                           const std::vector<std::pair<std::string, std::string>>& metadata = {}) {
  SafetensorsWriter w = tiny_gpt_writer(s);
  for (const auto& [key, value] : metadata) w.set_metadata(key, value);
  w.write(path);
}

// A random FlashAR gate drawn as tools/reference.py make-flashar draws one (fc1 ~ N(0, 1 / sqrt(2
// vocab)), fc2 ~ 2 N(0, 1), bias 0.3), so the weight of H varies from target to target, and the
// FlashAR metadata of a branch of one block from the backbone's last.
inline void add_tiny_flashar_gate(SafetensorsWriter& w, const TinyGptSpec& s, TinyNormal& rng) {
  const int64_t P = 32;  // tools/flashar_model.py gate_hidden_size: max(32, vocab / 512)
  std::vector<float> fc1(static_cast<size_t>(P * 2 * s.vocab)), fc2(static_cast<size_t>(P));
  for (float& x : fc1) x = rng.next() / std::sqrt(2.0f * static_cast<float>(s.vocab));
  for (float& x : fc2) x = 2.0f * rng.next();
  w.add_f32("gate.fc1.weight", {P, 2 * s.vocab}, fc1);
  w.add_f32("gate.fc2.weight", {1, P}, fc2);
  w.add_f32("gate.fc2.bias", {1}, {0.3f});
  w.set_metadata("role", "flashar");
  w.set_metadata("flashar.vertical_start_layer", std::to_string(s.layers - 1));
  w.set_metadata("flashar.vertical_layers", "1");
  w.set_metadata("flashar.gate_hidden", std::to_string(P));
}

// A random FlashAR file (engine/model/flashar_model.h) whose backbone is write_tiny_gpt's model of
// `s`: one vertical block from the backbone's last block, its norm and head, and
// add_tiny_flashar_gate's gate.
inline void write_tiny_flashar(const std::string& path, const TinyGptSpec& s, float scale, uint64_t seed) {
  SafetensorsWriter w = tiny_gpt_writer(s);
  TinyNormal rng(seed);
  const WeightFill fill = [&](const std::string&, bool is_norm, std::vector<float>& v) {
    for (float& x : v) x = is_norm ? 1.0f + 0.1f * rng.next() : scale * rng.next();
  };
  add_synthetic_blocks(w, s.dim, 1, s.ffn_hidden, fill, StDType::F32, "vertical.layers.");
  add_synthetic_tensor(w, "vertical.norm.weight", {s.dim}, true, fill, StDType::F32);
  add_synthetic_tensor(w, "vertical.output.weight", {s.vocab, s.dim}, false, fill, StDType::F32);
  add_tiny_flashar_gate(w, s, rng);
  w.write(path);
}

// Weights of a tiny random Janus-Pro (engine/families/janus_synthetic.h): norms 1 +- 0.1, the rest
// (biases too) ~ scale * N(0, 1), plus noise_scale * N(0, 1) from noise_seed (0: none). gen_embed
// has scale 1 so the image token fed moves the next one visibly.
inline WeightFill tiny_janus_fill(uint64_t seed, float scale, uint64_t noise_seed = 0, float noise_scale = 0) {
  auto rng = std::make_shared<TinyNormal>(seed);
  auto noise = std::make_shared<TinyNormal>(noise_seed);
  return [=](const std::string& name, bool f32, std::vector<float>& v) {
    const bool bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    const float sd = name == "gen_embed.weight" ? 1.0f : scale;
    for (float& x : v)
      x = f32 && !bias ? 1.0f + 0.1f * rng->next()
                       : sd * rng->next() + (noise_seed ? noise_scale * noise->next() : 0.0f);
  };
}

// A tiny Janus-Pro's shape: TinyGptSpec's trunk sizes, a text vocabulary of 16, gen_head's hidden
// width dim and `prompt_tokens` condition positions.
inline JanusShape tiny_janus_shape(const TinyGptSpec& s, int64_t prompt_tokens) {
  JanusShape shape;
  shape.dim = s.dim;
  shape.n_layer = s.layers;
  shape.n_head = s.heads;
  shape.ffn_hidden = s.ffn_hidden;
  shape.text_vocab = 16;
  shape.image_vocab = s.vocab;
  shape.grid = s.grid;
  shape.head_hidden = s.dim;
  shape.prompt_tokens = prompt_tokens;
  return shape;
}

// A tiny random Janus-Pro of tiny_janus_shape with tiny_janus_fill's weights.
inline void write_tiny_janus(const std::string& path, const TinyGptSpec& s, int64_t prompt_tokens) {
  synthetic_janus(tiny_janus_shape(s, prompt_tokens), tiny_janus_fill(s.seed, s.scale, s.noise_seed, s.noise_scale),
                  StDType::F32)
      .write(path);
}

// A FlashAR file on a tiny Janus-Pro: every tensor and metadata key of write_tiny_janus's model of
// `s` (the fine-tuned backbone), one vertical block from the backbone's last, vertical.norm.weight,
// the vertical head under the family head's names (vertical.gen_head.*) and add_tiny_flashar_gate's
// gate.
struct TinyJanusFlashAr {
  int64_t prompt_tokens = 5;
  float scale = 0.3f;  // the branch's random values: ~ scale * N(0, 1), norm weights 1 +- 0.1
  uint64_t seed = 6;   // of the branch's and the gate's values
  // The branch a copy of the backbone's last block, final norm and gen_head: its state is then the
  // backbone's and V's logits are H's.
  bool copy_backbone = false;
  bool vertical_head = true;  // false: no vertical.gen_head.* (what a loader must refuse)
};

inline SafetensorsWriter tiny_janus_flashar_writer(const TinyGptSpec& s, const TinyJanusFlashAr& f) {
  std::map<std::string, std::vector<float>> backbone;
  const WeightFill janus = tiny_janus_fill(s.seed, s.scale, s.noise_seed, s.noise_scale);
  const WeightFill kept = [&](const std::string& name, bool f32, std::vector<float>& v) {
    janus(name, f32, v);
    backbone[name] = v;
  };
  SafetensorsWriter w = synthetic_janus(tiny_janus_shape(s, f.prompt_tokens), kept, StDType::F32);
  TinyNormal rng(f.seed);
  const std::string last = "layers." + std::to_string(s.layers - 1) + ".", block = "vertical.layers.0.";
  const WeightFill branch = [&](const std::string& name, bool f32, std::vector<float>& v) {
    if (f.copy_backbone) {  // vertical.layers.0.X is layers.{last}.X, vertical.X is X
      v = backbone.at(name.rfind(block, 0) == 0 ? last + name.substr(block.size()) : name.substr(9));
      return;
    }
    const bool bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    for (float& x : v) x = f32 && !bias ? 1.0f + 0.1f * rng.next() : f.scale * rng.next();
  };
  const int64_t D = s.dim, Hh = s.dim, V = s.vocab;
  add_synthetic_blocks(w, D, 1, s.ffn_hidden, branch, StDType::F32, "vertical.layers.");
  add_synthetic_tensor(w, "vertical.norm.weight", {D}, true, branch, StDType::F32);
  if (f.vertical_head) {
    add_synthetic_tensor(w, "vertical.gen_head.output_mlp_projector.weight", {Hh, D}, false, branch, StDType::F32);
    add_synthetic_tensor(w, "vertical.gen_head.output_mlp_projector.bias", {Hh}, true, branch, StDType::F32);
    add_synthetic_tensor(w, "vertical.gen_head.vision_head.weight", {V, Hh}, false, branch, StDType::F32);
    add_synthetic_tensor(w, "vertical.gen_head.vision_head.bias", {V}, true, branch, StDType::F32);
  }
  add_tiny_flashar_gate(w, s, rng);
  return w;
}

// Random draft heads h1..h{grid-1} (at most 4) and v1, v2 for a tiny GPT (tools/vkspec_models.py
// DraftHeads layout): each head is x + SiLU(W x + b) with W ~ scale * N(0, 1).
// base_family: the metadata naming the family they were trained on (empty: none, i.e. llamagen).
inline void write_tiny_heads(const std::string& path, const TinyGptSpec& s, float scale, uint64_t seed,
                             const std::string& base_family = "") {
  TinyNormal rng(seed);
  SafetensorsWriter w;
  std::string names, offsets;
  auto head = [&](const std::string& name, int64_t offset) {
    std::vector<float> m(static_cast<size_t>(s.dim * s.dim)), b(static_cast<size_t>(s.dim));
    for (float& x : m) x = scale * rng.next();
    for (float& x : b) x = scale * rng.next();
    w.add_f32("draft_heads." + name + ".linear.weight", {s.dim, s.dim}, m);
    w.add_f32("draft_heads." + name + ".linear.bias", {s.dim}, b);
    names += (names.empty() ? "" : ",") + name;
    offsets += (offsets.empty() ? "" : ",") + std::to_string(offset);
  };
  for (int64_t j = 1; j <= std::min<int64_t>(4, s.grid - 1); ++j) head("h" + std::to_string(j), j);
  head("v1", s.grid);
  head("v2", 2 * s.grid);
  w.set_metadata("vkspec.kind", "draft_heads");
  w.set_metadata("dim", std::to_string(s.dim));
  w.set_metadata("vocab_size", std::to_string(s.vocab));
  w.set_metadata("grid_size", std::to_string(s.grid));
  w.set_metadata("heads", names);
  w.set_metadata("offsets", offsets);
  w.set_metadata("placement", "post_norm");
  if (!base_family.empty()) w.set_metadata("base_family", base_family);
  w.write(path);
}

// Random SSD latent heads h and v for a tiny GPT (tools/vkspec_models.py LatentHeads layout,
// depth 1): each is x + fc2(SiLU(fc1 x + b1)) + b2 with weights ~ scale * N(0, 1).
inline void write_tiny_latent_heads(const std::string& path, const TinyGptSpec& s, float scale, uint64_t seed,
                                    int64_t hidden = 16, const std::string& base_family = "") {
  TinyNormal rng(seed);
  SafetensorsWriter w;
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = scale * rng.next();
    return v;
  };
  const size_t D = static_cast<size_t>(s.dim), H = static_cast<size_t>(hidden);
  for (const char* axis : {"h", "v"}) {
    const std::string p = std::string("latent_heads.") + axis + ".0.";
    w.add_f32(p + "fc1.weight", {hidden, s.dim}, random(H * D));
    w.add_f32(p + "fc1.bias", {hidden}, random(H));
    w.add_f32(p + "fc2.weight", {s.dim, hidden}, random(D * H));
    w.add_f32(p + "fc2.bias", {s.dim}, random(D));
  }
  const std::vector<std::pair<std::string, std::string>> meta = {{"vkspec.kind", "latent_heads"},
                                                                 {"dim", std::to_string(s.dim)},
                                                                 {"vocab_size", std::to_string(s.vocab)},
                                                                 {"grid_size", std::to_string(s.grid)},
                                                                 {"heads", "h,v"},
                                                                 {"offsets", "1," + std::to_string(s.grid)},
                                                                 {"hidden", std::to_string(hidden)},
                                                                 {"depth", "1"},
                                                                 {"placement", "post_norm"},
                                                                 {"predicts", "post_norm_hidden"},
                                                                 {"block", "residual_silu_mlp"},
                                                                 {"application", "recursive"},
                                                                 {"output", "shared_base_output"}};
  for (const auto& [k, v] : meta) w.set_metadata(k, v);
  if (!base_family.empty()) w.set_metadata("base_family", base_family);
  w.write(path);
}

// A random EAGLE drafter for a tiny GPT (tools/vkspec_models.py EagleDrafter layout, one layer,
// RMSNorm on the embedding): weights ~ scale * N(0, 1), fc's feature half plus the identity so the
// predicted feature starts near the input one. `meta` overrides metadata (contract tests).
inline void write_tiny_eagle_drafter(const std::string& path, const TinyGptSpec& s, float scale, uint64_t seed,
                                     const std::vector<std::pair<std::string, std::string>>& meta_overrides = {}) {
  TinyNormal rng(seed);
  SafetensorsWriter w;
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = scale * rng.next();
    return v;
  };
  auto norm = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = 1.0f + 0.1f * rng.next();
    return v;
  };
  const int64_t D = s.dim, H = s.ffn_hidden;
  const size_t d = static_cast<size_t>(D), h = static_cast<size_t>(H);
  std::vector<float> fc = random(d * 2 * d);
  for (size_t i = 0; i < d; ++i) fc[i * 2 * d + d + i] += 1.0f;
  w.add_f32("eagle.embed_norm.weight", {D}, norm(d));
  w.add_f32("eagle.fc.weight", {D, 2 * D}, fc);
  w.add_f32("eagle.fc.bias", {D}, random(d));
  const std::string p = "eagle.layers.0.";
  w.add_f32(p + "attention.wqkv.weight", {3 * D, D}, random(3 * d * d));
  w.add_f32(p + "attention.wo.weight", {D, D}, random(d * d));
  w.add_f32(p + "feed_forward.w1.weight", {H, D}, random(h * d));
  w.add_f32(p + "feed_forward.w3.weight", {H, D}, random(h * d));
  w.add_f32(p + "feed_forward.w2.weight", {D, H}, random(d * h));
  w.add_f32(p + "ffn_norm.weight", {D}, norm(d));
  std::vector<std::pair<std::string, std::string>> meta = {
      {"vkspec.kind", "eagle_drafter"},
      {"dim", std::to_string(D)},
      {"n_layer", "1"},
      {"embed_norm", "rmsnorm"},
      {"n_head", std::to_string(s.heads)},
      {"n_kv_head", std::to_string(s.heads)},
      {"head_dim", std::to_string(D / s.heads)},
      {"ffn_hidden", std::to_string(H)},
      {"vocab_size", std::to_string(s.vocab)},
      {"grid_size", std::to_string(s.grid)},
      {"feature", "post_norm_hidden"},
      {"predicts", "post_norm_hidden"},
      {"input", "fc(cat(embed_norm(tok_embeddings(token_j)), feature_j))"},
      {"embedding", "shared_base_tok_embeddings"},
      {"output", "shared_base_output"},
      {"first_layer_attention_norm", "none"},
      {"final_norm", "none"},
      {"rope_index", "token_index_plus_cls_token_num"}};
  for (const auto& [k, v] : meta_overrides) {
    bool found = false;
    for (auto& m : meta)
      if (m.first == k) m.second = v, found = true;
    if (!found) meta.emplace_back(k, v);
  }
  for (const auto& [k, v] : meta) w.set_metadata(k, v);
  w.write(path);
}

// A tiny Lumina-mGPT's shape: TinyGptSpec's trunk sizes (grid even: its size tokens count 32-px
// steps), one q/k norm group, Chameleon's text vocabulary layout cut to 8832 ids and
// `prompt_tokens` condition positions.
inline LuminaShape tiny_lumina_shape(const TinyGptSpec& s, int64_t prompt_tokens) {
  LuminaShape shape;
  shape.dim = s.dim;
  shape.n_layer = s.layers;
  shape.n_head = s.heads;
  shape.ffn_hidden = s.ffn_hidden;
  shape.text_vocab = 8832;
  shape.image_codes = s.vocab;
  shape.grid = s.grid;
  shape.prompt_tokens = prompt_tokens;
  return shape;
}

// A tiny random Lumina-mGPT of tiny_lumina_shape with tiny_janus_fill's weights (the q/k norms'
// vectors, biases too, 1 +- 0.1).
inline void write_tiny_lumina(const std::string& path, const TinyGptSpec& s, int64_t prompt_tokens) {
  synthetic_lumina(tiny_lumina_shape(s, prompt_tokens), tiny_janus_fill(s.seed, s.scale, s.noise_seed, s.noise_scale),
                   StDType::F32)
      .write(path);
}

// A Lumina-mGPT prompt condition from the template's text ids, as the family makes one (BOS, text,
// separator, image start, sizes; the unconditional row the last three alone), with no tokenizer.
inline std::shared_ptr<const Condition> tiny_lumina_prompt(const std::string& model, const std::vector<int32_t>& text,
                                                           const std::string& name) {
  return LuminaPrompts(std::make_shared<const SafetensorsFile>(model), nullptr).condition_of_text(name, text);
}

// A Janus-Pro prompt condition from token ids, as the family makes one (BOS, words,
// <begin_of_image>, its unconditional form the same ids with all but the first and last made pad):
// rows of the text table of the Janus file at `model`, with no tokenizer needed.
inline std::shared_ptr<const Condition> tiny_janus_prompt(const std::string& model, const std::vector<int64_t>& words,
                                                          const std::string& name) {
  const SafetensorsFile f(model);
  const std::vector<float> table = f.read_f32("text_embeddings.weight");
  const int64_t D = f.meta_int("dim"), pad = f.meta_int("pad_id");
  std::vector<int64_t> ids = {f.meta_int("bos_id")};
  ids.insert(ids.end(), words.begin(), words.end());
  ids.push_back(f.meta_int("image_start_id"));
  auto rows = [&](bool uncond) {
    std::vector<float> v;
    for (size_t k = 0; k < ids.size(); ++k) {
      const int64_t id = uncond && k > 0 && k + 1 < ids.size() ? pad : ids[k];
      v.insert(v.end(), table.begin() + id * D, table.begin() + (id + 1) * D);
    }
    return v;
  };
  const int64_t n = static_cast<int64_t>(ids.size());
  const std::vector<uint8_t> valid(ids.size(), 1);
  auto null_form = std::make_shared<CaptionEmbeddings>("unconditional", n, D, rows(true), valid);
  std::vector<int32_t> uncond(ids.begin(), ids.end());
  for (size_t k = 1; k + 1 < uncond.size(); ++k) uncond[k] = static_cast<int32_t>(pad);
  null_form->set_prompt(name, uncond, nullptr);
  auto c = std::make_shared<CaptionEmbeddings>("prompt", n, D, rows(false), valid);
  c->set_prompt(name, std::vector<int32_t>(ids.begin(), ids.end()), null_form);
  return c;
}

}  // namespace vkspec::testing
