// LlamaGen (Sun et al. 2024, autoregressive/models/gpt.py) as two model families: class-to-image
// (a class table at the one condition position) and text-to-image (caption embeddings through the
// caption MLP, a learned null caption). Both embed image tokens with tok_embeddings, leave through
// the untied `output` matrix and use 2D RoPE over the grid (GptConfig::from_file reads their keys).
#include <filesystem>

#include "common/error.h"
#include "engine/families/llamagen_prompt.h"
#include "engine/model/gpt.h"
#include "engine/model/model_family.h"
#include "engine/model/synthetic_gpt.h"
#include "engine/ops/embedding.h"
#include "engine/ops/gelu.h"
#include "engine/ops/matmul.h"

namespace vkspec {
namespace {

// What both LlamaGen families share: the token table (the head, `output`, is make_llamagen_head's).
class LlamaGenParts : public GptFamilyParts {
 public:
  LlamaGenParts(WeightStore& w, const GptConfig& cfg, DType wt) : cfg_(cfg) {
    const int64_t D = cfg.dim, V = cfg.vocab_size;
    tok_embeddings_ =
        w.load("tok_embeddings.weight", {V, D}, wt, "dim=" + std::to_string(D) + ", vocab_size=" + std::to_string(V));
  }
  const Tensor& token_embeddings() const override { return tok_embeddings_; }

 protected:
  GptConfig cfg_;
  Tensor tok_embeddings_;
};

// Both families' head: the untied `output` matrix.
std::unique_ptr<ImageHead> make_llamagen_head(Context&, WeightStore& w, const GptConfig& cfg, const GptOptions& opt,
                                              const std::string& prefix) {
  return make_output_matrix_head(w, cfg, opt.weights, prefix);
}

class LlamaGenC2iParts final : public LlamaGenParts {
 public:
  LlamaGenC2iParts(WeightStore& w, const GptConfig& cfg, DType wt) : LlamaGenParts(w, cfg, wt) {
    cls_embedding_ = w.load("cls_embedding.embedding_table.weight", {cfg.num_classes + 1, cfg.dim}, wt,
                            "dim=" + std::to_string(cfg.dim) + ", num_classes=" + std::to_string(cfg.num_classes) +
                                " (+1 null class)");
  }
  void embed_condition(CommandStream& s, const GptBatch& batch, int64_t b, const TensorView& rows) override {
    ops::embedding(s, cls_embedding_, batch.label_ids(b), rows);
  }
  std::shared_ptr<const Condition> prompt_condition(const std::string&) const override {
    throw Error("the model is class-conditional (" + cfg_.family + "): it takes a class (--class), not a prompt");
  }

 private:
  Tensor cls_embedding_;  // [num_classes + 1, dim]
};

class LlamaGenT2iParts final : public LlamaGenParts {
 public:
  LlamaGenT2iParts(Context& ctx, WeightStore& w, const GptConfig& cfg, const GptOptions& opt);
  void embed_condition(CommandStream& s, const GptBatch& batch, int64_t b, const TensorView& rows) override {
    const int64_t n = batch.condition_queries();
    if (batch.null_condition(b)) {
      ops::embedding(s, null_caption_, batch.condition_positions(), rows);
    } else {
      embed_caption(s, batch.caption_values(b), hidden_.view().rows(0, n), rows);
    }
  }
  std::shared_ptr<const Condition> prompt_condition(const std::string& prompt) const override {
    if (!prompts_)
      throw Error("the model (" + cfg_.family +
                  ") names no text encoder (metadata text_encoder: convert_llamagen.py "
                  "--text-encoder FILE, a T5 from convert_t5.py beside it): give --caption-embeddings FILE");
    return prompts_->condition(prompt);
  }
  bool takes_prompt() const override { return prompts_ != nullptr; }

 private:
  // y = fc2(gelu_tanh(fc1(caption))), [rows, caption_dim] -> [rows, dim]; hidden: [rows, dim] scratch.
  void embed_caption(CommandStream& s, const TensorView& caption, const TensorView& hidden, const TensorView& y) {
    ops::matmul(s, caption, fc1_, hidden);
    ops::gelu_tanh(s, hidden, hidden);
    ops::matmul(s, hidden, fc2_, y);
  }

  Tensor fc1_, fc2_, hidden_;
  Tensor null_caption_;                       // the MLP of the learned null caption, f32 [cls_token_num, dim]
  std::unique_ptr<LlamaGenPrompts> prompts_;  // with a text encoder (metadata text_encoder)
};

LlamaGenT2iParts::LlamaGenT2iParts(Context& ctx, WeightStore& w, const GptConfig& cfg, const GptOptions& opt)
    : LlamaGenParts(w, cfg, opt.weights) {
  const int64_t D = cfg.dim, C = cfg.caption_dim, N = cfg.cls_token_num;
  const std::string from = "dim=" + std::to_string(D) + ", caption_dim=" + std::to_string(C);
  fc1_ = w.load("cls_embedding.cap_proj.fc1.weight", {D, C}, opt.weights, from);
  fc2_ = w.load("cls_embedding.cap_proj.fc2.weight", {D, D}, opt.weights, from);
  hidden_ = ctx.tensor(DType::F32, {std::max(opt.max_queries, N), D}, "gpt caption hidden");
  // LlamaGen's null caption has 120 rows whatever cls_token_num is; the model reads the first
  // cls_token_num. It never changes, so its MLP output is computed once here.
  const std::string name = "cls_embedding.uncond_embedding";
  const std::string& path = w.file().path();
  if (!w.file().has(name)) throw Error(path + ": tensor " + name + " missing (the null caption of a t2i model)");
  const StTensorInfo& info = w.file().info(name);
  if (info.shape.size() != 2 || info.shape[0] < N || info.shape[1] != C)
    throw Error(path + ": tensor " + name + " has shape " + info.shape_str() + ", expected [>= " + std::to_string(N) +
                ", " + std::to_string(C) + "] (cls_token_num, caption_dim)");
  Tensor uncond = w.load(name, Shape{info.shape[0], info.shape[1]}, DType::F32, from);
  null_caption_ = ctx.tensor(DType::F32, {N, D}, "gpt null caption");
  CommandStream s(ctx);
  embed_caption(s, uncond.view().rows(0, N), hidden_.view().rows(0, N), null_caption_.view());
  s.submit_and_wait();
  if (w.file().has_meta("text_encoder")) {
    const std::string encoder = (std::filesystem::path(path).parent_path() / w.file().meta("text_encoder")).string();
    prompts_ = std::make_unique<LlamaGenPrompts>(ctx, path, encoder, N, C);
  }
}

// Files without vkspec.family are LlamaGen's (every file written before families existed).
bool llamagen_file(const SafetensorsFile& f, const char* model_type) {
  if (f.has_meta("vkspec.family") && f.meta("vkspec.family") != "llamagen") return false;
  return (f.has_meta("model_type") ? f.meta("model_type") : std::string("c2i")) == model_type;
}

// LlamaGen's B, L and XL (16x16 tokens unless grid says), and "tiny" for the tests: the same code
// path in a second, even under the validation layer.
SafetensorsWriter llamagen_synthetic(const std::string& name, int64_t grid, uint64_t seed) {
  GptShape s;
  if (name == "tiny") {
    s.dim = 64;
    s.n_layer = 2;
    s.n_head = 2;
    s.vocab_size = 512;
    s.num_classes = 10;
    s.grid_size = grid ? grid : 16;
    s.ffn_hidden = GptConfig::llamagen_ffn_hidden(s.dim);
  } else {
    s = llamagen_shape(name, grid ? grid : 16);
  }
  return synthetic_gpt(s, llamagen_init_fill(seed));
}

const RegisterModelFamily c2i({
    "llamagen-c2i",
    0,
    "LlamaGen class-to-image GPT: a class embedding, 2D RoPE over the grid (the shipped fmnist_gpt16)",
    "Sun et al. 2024, Autoregressive Model Beats Diffusion (FoundationVision/LlamaGen)",
    [](const SafetensorsFile& f) { return llamagen_file(f, "c2i"); },
    [](const SafetensorsFile& f) { return GptConfig::from_file(f); },
    {"B", "L", "XL", "tiny"},
    llamagen_synthetic,
    [](Context&, WeightStore& w, const GptConfig& cfg, const GptOptions& opt) -> std::unique_ptr<GptFamilyParts> {
      return std::make_unique<LlamaGenC2iParts>(w, cfg, opt.weights);
    },
    make_llamagen_head,
});

const RegisterModelFamily t2i({
    "llamagen-t2i",
    1,
    "LlamaGen text-to-image GPT: a prompt through flan-T5 on the engine (or its caption embeddings) and the "
    "caption MLP, 2D RoPE",
    "Sun et al. 2024, Autoregressive Model Beats Diffusion (FoundationVision/LlamaGen)",
    [](const SafetensorsFile& f) { return llamagen_file(f, "t2i"); },
    [](const SafetensorsFile& f) { return GptConfig::from_file(f); },
    {},
    {},
    [](Context& ctx, WeightStore& w, const GptConfig& cfg, const GptOptions& opt) -> std::unique_ptr<GptFamilyParts> {
      return std::make_unique<LlamaGenT2iParts>(ctx, w, cfg, opt);
    },
    make_llamagen_head,
});

}  // namespace
}  // namespace vkspec
