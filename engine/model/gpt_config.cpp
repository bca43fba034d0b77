#include "engine/model/gpt_config.h"

#include "common/error.h"

namespace vkspec {

GptConfig GptConfig::from_file(const SafetensorsFile& f) {
  auto fail = [&](const std::string& what) -> Error { return Error(f.path() + ": " + what); };
  if (f.has_meta("vkspec.kind") && f.meta("vkspec.kind") != "gpt")
    throw fail("is a '" + f.meta("vkspec.kind") + "' model, not a GPT");
  GptConfig c;
  const std::string type = f.has_meta("model_type") ? f.meta("model_type") : "c2i";
  if (type == "c2i")
    c.model_type = ModelType::c2i;
  else if (type == "t2i")
    c.model_type = ModelType::t2i;
  else
    throw fail("metadata model_type '" + type + "' is neither c2i nor t2i");
  const bool t2i = c.model_type == ModelType::t2i;
  c.dim = f.meta_int("dim");
  c.n_layer = f.meta_int("n_layer");
  c.n_head = f.meta_int("n_head");
  c.n_kv_head = f.meta_int("n_kv_head", c.n_head);
  c.vocab_size = f.meta_int("vocab_size");
  c.num_classes = t2i ? f.meta_int("num_classes", 0) : f.meta_int("num_classes");
  c.caption_dim = t2i ? f.meta_int("caption_dim") : 0;
  c.grid_size = f.meta_int("grid_size");
  c.cls_token_num = f.meta_int("cls_token_num", t2i ? 120 : 1);
  c.rope_base = static_cast<float>(f.meta_float("rope_base", 10000.0));
  c.norm_eps = static_cast<float>(f.meta_float("norm_eps", 1e-5));
  const int64_t multiple_of = f.meta_int("multiple_of", 256);
  if (c.dim <= 0 || c.n_layer <= 0 || c.n_head <= 0 || c.n_kv_head <= 0 || c.vocab_size <= 0 || c.grid_size <= 0 ||
      c.cls_token_num <= 0 || multiple_of <= 0)
    throw fail("metadata has a non-positive size (dim, n_layer, n_head, n_kv_head, vocab_size, grid_size, "
               "cls_token_num, multiple_of)");
  if (!t2i && c.num_classes <= 0) throw fail("metadata num_classes must be positive for a class-conditional model");
  if (!t2i && c.cls_token_num != 1)
    throw fail("metadata cls_token_num=" + std::to_string(c.cls_token_num) +
               ": a class-conditional model has one condition position");
  if (t2i && c.caption_dim <= 0) throw fail("metadata caption_dim must be positive for a text-conditional model");
  if (c.n_head % c.n_kv_head)
    throw fail("metadata n_kv_head=" + std::to_string(c.n_kv_head) +
               " does not divide n_head=" + std::to_string(c.n_head));
  if (c.n_kv_head != c.n_head)
    throw fail("grouped-query attention (n_kv_head=" + std::to_string(c.n_kv_head) + " < n_head=" +
               std::to_string(c.n_head) + ") is not supported: the attention op and KV cache take n_kv_head = n_head");
  if (c.dim % c.n_head) throw fail("dim " + std::to_string(c.dim) + " is not divisible by n_head");
  c.head_dim = c.dim / c.n_head;
  if (c.head_dim % 4) throw fail("head_dim " + std::to_string(c.head_dim) + " must be a multiple of 4 (2D RoPE)");
  auto cap = [&](const char* key, int64_t v, int64_t limit) {
    if (v > limit)
      throw fail("metadata " + std::string(key) + "=" + std::to_string(v) + " is implausibly large (limit " +
                 std::to_string(limit) + ")");
  };
  cap("dim", c.dim, 65536);
  cap("n_layer", c.n_layer, 1024);
  cap("vocab_size", c.vocab_size, 1 << 24);
  cap("grid_size", c.grid_size, 256);
  cap("num_classes", c.num_classes, 1 << 24);
  cap("caption_dim", c.caption_dim, 65536);
  cap("cls_token_num", c.cls_token_num, 4096);
  c.ffn_hidden = f.meta_int("ffn_hidden", llamagen_ffn_hidden(c.dim, multiple_of));
  c.defaults.cfg = static_cast<float>(f.meta_float("cfg", 4.0));
  c.defaults.temperature = static_cast<float>(f.meta_float("temperature", 1.0));
  c.defaults.top_k = f.meta_int("top_k", 2000);
  c.defaults.top_p = static_cast<float>(f.meta_float("top_p", 1.0));
  return c;
}

int64_t GptConfig::llamagen_ffn_hidden(int64_t dim, int64_t multiple_of) {
  const int64_t h = 2 * 4 * dim / 3;
  return (h + multiple_of - 1) / multiple_of * multiple_of;
}

}  // namespace vkspec
