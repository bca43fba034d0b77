// Janus-Pro (Chen et al. 2025, deepseek-ai/Janus) as a model family, its image-generation path as
// generation_inference.py runs it: a LLaMA language model (RMSNorm, SwiGLU, multi-head attention,
// 1D RoPE over prompt and image positions), the prompt's token embeddings at the condition
// positions (janus_prompt.h), image tokens embedded by gen_aligner(gen_embed(id)) and image logits
// from gen_head, an MLP, on the final normed hidden state. tools/convert_janus.py writes the file:
// the trunk in LlamaGen's layout (fused wqkv, q and k rows in interleaved RoPE pairs), the rest
// under the released names.
#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "engine/families/janus_prompt.h"
#include "engine/families/janus_synthetic.h"
#include "engine/model/gpt.h"
#include "engine/model/model_family.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/matmul.h"

namespace vkspec {
namespace {

constexpr const char* kFamily = "janus-pro";
constexpr const char* kTextTable = "text_embeddings.weight";

GptConfig janus_config(const SafetensorsFile& f) {
  GptConfig c;
  c.family = kFamily;
  c.model_type = ModelType::t2i;  // value rows at the condition positions: the prompt's embeddings
  c.rope_layout = RopeLayout::sequence_1d;
  c.input = ConditionInput::Prompt;
  c.dim = f.meta_int("dim");
  c.n_layer = f.meta_int("n_layer");
  c.n_head = f.meta_int("n_head");
  c.n_kv_head = f.meta_int("n_kv_head", c.n_head);
  c.head_dim = c.n_head > 0 ? c.dim / c.n_head : 0;
  c.vocab_size = f.meta_int("vocab_size");
  c.caption_dim = c.dim;
  c.grid_size = f.meta_int("grid_size");
  c.cls_token_num = f.meta_int("cls_token_num");
  c.text_vocab = f.meta_int("text_vocab_size");
  c.ffn_hidden = f.meta_int("ffn_hidden");
  c.rope_base = static_cast<float>(f.meta_float("rope_base", 10000.0));
  c.norm_eps = static_cast<float>(f.meta_float("norm_eps", 1e-6));
  // generation_inference.py: cfg_weight 5, temperature 1, no top-k or top-p.
  c.defaults.cfg = static_cast<float>(f.meta_float("cfg", 5.0));
  c.defaults.temperature = static_cast<float>(f.meta_float("temperature", 1.0));
  c.defaults.top_k = f.meta_int("top_k", 0);
  c.defaults.top_p = static_cast<float>(f.meta_float("top_p", 1.0));
  c.validate(f.path());
  return c;
}

// The file `name` names beside the model file (metadata tokenizer, vq).
std::string sibling(const SafetensorsFile& f, const std::string& key) {
  const std::filesystem::path dir = std::filesystem::path(f.path()).parent_path();
  return (dir / f.meta(key)).string();
}

// gen_head: vision_head(GELU(output_mlp_projector(h))), both with biases, from the tensors
// `prefix` + gen_head.* (FlashAR's vertical head: vertical.gen_head.*); in blocks of the scratch's
// rows when more come (draft heads' picks).
class JanusHead final : public ImageHead {
 public:
  JanusHead(Context& ctx, WeightStore& w, const GptConfig& cfg, const GptOptions& opt, const std::string& prefix);
  void record(CommandStream& s, const TensorView& xn, const TensorView& logits,
              const ops::MatmulFusion& per_image) const override {
    const int64_t R = xn.shape[0], block = hidden_.shape()[0];
    for (int64_t r = 0; r < R; r += block) {
      const int64_t n = std::min(block, R - r);
      const TensorView x = xn.rows(r, n), out = logits.rows(r, n), hidden = hidden_.view().rows(0, n);
      ops::matmul_fused(s, x, fc1_, hidden, per_image);
      ops::bias_act(s, hidden, b1_, hidden, ops::Activation::Gelu);
      ops::matmul_fused(s, hidden, fc2_, out, per_image);
      ops::bias_act(s, out, b2_, out, ops::Activation::None);
    }
  }
  int64_t params() const override { return fc1_.shape()[0] * (fc1_.shape()[1] + fc2_.shape()[0]); }

 private:
  Tensor fc1_, b1_, fc2_, b2_;
  Tensor hidden_;  // f32 [batch rows * queries, head_hidden]: the scratch a block of rows goes through
};

JanusHead::JanusHead(Context& ctx, WeightStore& w, const GptConfig& cfg, const GptOptions& opt,
                     const std::string& prefix) {
  const SafetensorsFile& f = w.file();
  const int64_t D = cfg.dim, V = cfg.vocab_size, Hh = f.meta_int("head_hidden");
  if (Hh <= 0) throw Error(f.path() + ": metadata head_hidden must be positive");
  const std::string from = "dim=" + std::to_string(D) + ", head_hidden=" + std::to_string(Hh);
  const std::string p = prefix + "gen_head.";
  fc1_ = w.load(p + "output_mlp_projector.weight", {Hh, D}, opt.weights, from);
  b1_ = w.load(p + "output_mlp_projector.bias", {Hh}, DType::F32, from);
  fc2_ = w.load(p + "vision_head.weight", {V, Hh}, opt.weights, from + ", vocab_size=" + std::to_string(V));
  b2_ = w.load(p + "vision_head.bias", {V}, DType::F32, "vocab_size=" + std::to_string(V));
  hidden_ = ctx.tensor(DType::F32, {opt.batch_rows * opt.max_queries, Hh}, "janus " + p + " hidden");
}

class JanusParts final : public GptFamilyParts {
 public:
  JanusParts(Context& ctx, WeightStore& w, const GptConfig& cfg, const GptOptions& opt);

  const Tensor& token_embeddings() const override { return table_; }
  // The prompt's rows (and the unconditional prompt's) are the condition values as they are.
  void embed_condition(CommandStream& s, const GptBatch& batch, int64_t b, const TensorView& rows) override {
    if (batch.null_condition(b))
      throw Error(cfg_.family + ": a batch row without a prompt (the unconditional row is the prompt's own)");
    s.copy(batch.caption_values(b), rows);
  }
  std::shared_ptr<const Condition> prompt_condition(const std::string& prompt) const override {
    return prompts_->condition(prompt);
  }
  std::shared_ptr<const Condition> own_condition(const Condition& c) const override { return prompts_->restated(c); }
  bool takes_prompt() const override { return true; }

 private:
  void build_token_table(Context& ctx, WeightStore& w, DType wt);

  GptConfig cfg_;
  Tensor table_;  // f32 [vocab, dim]: gen_aligner(gen_embed) of every image token
  std::unique_ptr<JanusPrompts> prompts_;
};

JanusParts::JanusParts(Context& ctx, WeightStore& w, const GptConfig& cfg, const GptOptions& opt) : cfg_(cfg) {
  const SafetensorsFile& f = w.file();
  const int64_t D = cfg.dim, text_vocab = cfg.text_vocab;
  if (text_vocab <= 0) throw Error(f.path() + ": metadata text_vocab_size must be positive");
  build_token_table(ctx, w, opt.weights);
  w.host_tensor(kTextTable, {text_vocab, D},
                "text_vocab_size=" + std::to_string(text_vocab) + ", dim=" + std::to_string(D));

  JanusPromptSpec spec;
  spec.model = f.path();
  spec.template_ = f.meta("prompt_template");
  spec.bos_id = static_cast<int32_t>(f.meta_int("bos_id"));
  spec.pad_id = static_cast<int32_t>(f.meta_int("pad_id"));
  spec.image_start_id = static_cast<int32_t>(f.meta_int("image_start_id"));
  spec.max_tokens = cfg.cls_token_num;
  spec.text_vocab = text_vocab;
  spec.dim = D;
  for (int64_t id : {spec.bos_id, spec.pad_id, spec.image_start_id})
    if (id < 0 || id >= text_vocab) throw Error(f.path() + ": a special token id outside the text vocabulary");
  std::shared_ptr<const text::BpeTokenizer> tokenizer;
  if (f.has_meta("tokenizer")) {
    const std::string path = sibling(f, "tokenizer");
    if (!std::filesystem::exists(path))
      throw Error(f.path() + ": its tokenizer " + path + " (metadata tokenizer) is missing");
    tokenizer = std::make_shared<const text::BpeTokenizer>(text::BpeTokenizer::load(path));
  }
  prompts_ = std::make_unique<JanusPrompts>(spec, tokenizer, w.shared_file(), kTextTable);
}

// gen_aligner (Linear, GELU, Linear) of every row of gen_embed, once, in row blocks: a lookup per
// image token afterwards, as LlamaGen's table. Kept f32: the aligner's output, not a weight.
void JanusParts::build_token_table(Context& ctx, WeightStore& w, DType wt) {
  const int64_t D = cfg_.dim, V = cfg_.vocab_size, E = w.file().meta_int("image_embed_dim");
  if (E <= 0) throw Error(w.file().path() + ": metadata image_embed_dim must be positive");
  const std::string from = "dim=" + std::to_string(D) + ", image_embed_dim=" + std::to_string(E);
  const Tensor embed = w.load("gen_embed.weight", {V, E}, DType::F32, from + ", vocab_size=" + std::to_string(V));
  const Tensor fc1 = w.load("gen_aligner.layers.0.weight", {D, E}, wt, from);
  const Tensor b1 = w.load("gen_aligner.layers.0.bias", {D}, DType::F32, from);
  const Tensor fc2 = w.load("gen_aligner.layers.2.weight", {D, D}, wt, from);
  const Tensor b2 = w.load("gen_aligner.layers.2.bias", {D}, DType::F32, from);
  table_ = ctx.tensor(DType::F32, {V, D}, "janus image-token table");
  const int64_t block = std::clamp<int64_t>((int64_t{1} << 22) / D, 1, V);  // 16 MiB of hidden rows
  const Tensor hidden = ctx.tensor(DType::F32, {block, D}, "janus aligner hidden");
  for (int64_t r = 0; r < V; r += block) {
    const int64_t n = std::min(block, V - r);
    CommandStream s(ctx);
    const TensorView h = hidden.view().rows(0, n), out = table_.view().rows(r, n);
    ops::matmul(s, embed.view().rows(r, n), fc1, h);
    ops::bias_act(s, h, b1, h, ops::Activation::Gelu);
    ops::matmul(s, h, fc2, out);
    ops::bias_act(s, out, b2, out, ops::Activation::None);
    s.submit_and_wait();
  }
}

// Janus-Pro-1B and -7B (their 24x24 grid unless grid says; 256 prompt positions, the converter's
// default), and "janus-tiny" for the tests; LlamaGen-like values, biases 0.
SafetensorsWriter janus_synthetic(const std::string& name, int64_t grid, uint64_t seed) {
  JanusShape s;
  if (name == "janus-tiny") {
    s.dim = 64;
    s.n_layer = 2;
    s.n_head = 2;
    s.ffn_hidden = 128;
    s.text_vocab = 64;
    s.image_vocab = 512;
    s.grid = 16;
    s.head_hidden = 64;
    s.prompt_tokens = 16;
  } else {
    s = janus_pro_shape(name, 256);
  }
  if (grid) s.grid = grid;
  return synthetic_janus(s, zero_bias_init_fill(seed));
}

const RegisterModelFamily janus({
    kFamily,
    2,
    "Janus-Pro text-to-image (1B, 7B): a prompt through DeepSeek's tokenizer and the SFT template, 1D RoPE, "
    "gen_embed + gen_aligner in, gen_head out",
    "Chen et al. 2025, Janus-Pro (deepseek-ai/Janus, generation_inference.py)",
    [](const SafetensorsFile& f) { return f.has_meta("vkspec.family") && f.meta("vkspec.family") == kFamily; },
    janus_config,
    {"janus-pro-1b", "janus-pro-7b", "janus-tiny"},
    janus_synthetic,
    [](Context& ctx, WeightStore& w, const GptConfig& cfg, const GptOptions& opt) -> std::unique_ptr<GptFamilyParts> {
      return std::make_unique<JanusParts>(ctx, w, cfg, opt);
    },
    [](Context& ctx, WeightStore& w, const GptConfig& cfg, const GptOptions& opt, const std::string& prefix)
        -> std::unique_ptr<ImageHead> { return std::make_unique<JanusHead>(ctx, w, cfg, opt, prefix); },
});

}  // namespace
}  // namespace vkspec
