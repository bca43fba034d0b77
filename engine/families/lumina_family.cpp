// Lumina-mGPT (Liu et al. 2024, Alpha-VLLM/Lumina-mGPT), a Chameleon fine-tuned for text-to-image,
// as a model family (docs/lumina.md): the LLaMA trunk with q/k LayerNorm per head before RoPE
// (GptConfig::qk_norm_groups) and, for Chameleon-34B's shape, the Swin placement; 1D RoPE over the
// released sequence, whose line-break token after each grid row the engine places
// (GptConfig::line_breaks, engine/model/line_breaks.h); the prompt's rows of the text table at the
// condition positions (lumina_prompt.h); image tokens embedded from their rows of the token table
// and scored by lm_head's image rows, the only tokens the released sampler draws.
// tools/convert_lumina.py writes the file.
#include <filesystem>

#include "common/error.h"
#include "engine/families/lumina_prompt.h"
#include "engine/families/lumina_synthetic.h"
#include "engine/model/gpt.h"
#include "engine/model/model_family.h"

namespace vkspec {
namespace {

constexpr const char* kFamily = "lumina-mgpt";

GptConfig lumina_config(const SafetensorsFile& f) {
  GptConfig c;
  c.family = kFamily;
  c.model_type = ModelType::t2i;  // value rows at the condition positions: the prompt's embeddings
  c.rope_layout = RopeLayout::sequence_1d;
  c.input = ConditionInput::Prompt;
  c.line_breaks = true;
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
  c.norm_eps = static_cast<float>(f.meta_float("norm_eps", 1e-5));
  c.qk_norm_groups = f.meta_int("qk_norm_groups");
  c.qk_norm_eps = static_cast<float>(f.meta_float("qk_norm_eps", 1e-5));
  c.swin_norm = f.meta_int("swin_norm", 0) != 0;
  if (c.qk_norm_groups <= 0) throw Error(f.path() + ": metadata qk_norm_groups must be positive");
  if (f.meta_int("placed_id") != c.vocab_size)
    throw Error(f.path() + ": metadata placed_id must be vocab_size (the line break's row follows the codes)");
  // inference_solver.py as the README runs it: cfg 4, image top-k 2000, temperature 1.
  c.defaults.cfg = static_cast<float>(f.meta_float("cfg", 4.0));
  c.defaults.temperature = static_cast<float>(f.meta_float("temperature", 1.0));
  c.defaults.top_k = f.meta_int("top_k", 2000);
  c.defaults.top_p = static_cast<float>(f.meta_float("top_p", 1.0));
  c.validate(f.path());
  return c;
}

class LuminaParts final : public GptFamilyParts {
 public:
  LuminaParts(WeightStore& w, const GptConfig& cfg, const GptOptions& opt);

  const Tensor& token_embeddings() const override { return table_; }
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
  GptConfig cfg_;
  Tensor table_;  // [codes + 1, dim]: the codes' rows, then the line break's (placed_id)
  std::unique_ptr<LuminaPrompts> prompts_;
};

LuminaParts::LuminaParts(WeightStore& w, const GptConfig& cfg, const GptOptions& opt) : cfg_(cfg) {
  const SafetensorsFile& f = w.file();
  const int64_t D = cfg.dim, V = cfg.vocab_size, text_vocab = cfg.text_vocab;
  const std::string from = "dim=" + std::to_string(D) + ", vocab_size=" + std::to_string(V);
  table_ = w.load("image_embeddings.weight", {V + 1, D}, opt.weights, from + " (+1: the line break)");
  w.host_tensor("text_embeddings.weight", {text_vocab, D},
                "text_vocab_size=" + std::to_string(text_vocab) + ", dim=" + std::to_string(D));
  std::shared_ptr<const text::BpeTokenizer> tokenizer;
  if (f.has_meta("tokenizer")) {
    const std::string path = (std::filesystem::path(f.path()).parent_path() / f.meta("tokenizer")).string();
    if (!std::filesystem::exists(path))
      throw Error(f.path() + ": its tokenizer " + path + " (metadata tokenizer) is missing");
    tokenizer = std::make_shared<const text::BpeTokenizer>(text::BpeTokenizer::load(path));
  }
  prompts_ = std::make_unique<LuminaPrompts>(w.shared_file(), tokenizer);
}

// Lumina-mGPT-7B at 512 and 768 px (320 prompt positions, the converter's default), and
// "lumina-tiny" for the tests: LlamaGen-like values, q/k norms weight ~1 and bias ~0.
SafetensorsWriter lumina_synthetic(const std::string& name, int64_t grid, uint64_t seed) {
  LuminaShape s;
  if (name == "lumina-tiny") {
    s.dim = 64;
    s.n_layer = 2;
    s.n_head = 4;
    s.ffn_hidden = 128;
    s.text_vocab = 8832;
    s.image_codes = 256;
    s.grid = 8;
    s.prompt_tokens = 16;
  } else {
    s = lumina_mgpt_shape(name, 320);
  }
  if (grid) s.grid = grid;
  return synthetic_lumina(s, zero_bias_init_fill(seed));
}

const RegisterModelFamily lumina({
    kFamily,
    3,
    "Lumina-mGPT text-to-image (7B at 512, 768 px): Chameleon's trunk with q/k LayerNorm, a prompt "
    "through Chameleon's tokenizer, line breaks placed after every grid row",
    "Liu et al. 2024, Lumina-mGPT (Alpha-VLLM/Lumina-mGPT, inference_solver.py)",
    [](const SafetensorsFile& f) { return f.has_meta("vkspec.family") && f.meta("vkspec.family") == kFamily; },
    lumina_config,
    {"lumina-mgpt-7b-512", "lumina-mgpt-7b-768", "lumina-tiny"},
    lumina_synthetic,
    [](Context&, WeightStore& w, const GptConfig& cfg, const GptOptions& opt) -> std::unique_ptr<GptFamilyParts> {
      return std::make_unique<LuminaParts>(w, cfg, opt);
    },
    // lm_head's image rows, [codes, dim], as LlamaGen's output matrix.
    [](Context&, WeightStore& w, const GptConfig& cfg, const GptOptions& opt, const std::string& prefix) {
      return make_output_matrix_head(w, cfg, opt.weights, prefix);
    },
});

}  // namespace
}  // namespace vkspec
