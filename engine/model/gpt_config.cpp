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
  c.family = t2i ? "llamagen-t2i" : "llamagen-c2i";
  c.input = t2i ? ConditionInput::CaptionEmbeddings : ConditionInput::ClassLabel;
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
  if (multiple_of <= 0) throw fail("metadata multiple_of must be positive");
  if (!t2i && c.num_classes <= 0) throw fail("metadata num_classes must be positive for a class-conditional model");
  if (!t2i && c.cls_token_num != 1)
    throw fail("metadata cls_token_num=" + std::to_string(c.cls_token_num) +
               ": a class-conditional model has one condition position");
  if (t2i && c.caption_dim <= 0) throw fail("metadata caption_dim must be positive for a text-conditional model");
  c.ffn_hidden = f.meta_int("ffn_hidden", llamagen_ffn_hidden(c.dim, multiple_of));
  c.defaults.cfg = static_cast<float>(f.meta_float("cfg", 4.0));
  c.defaults.temperature = static_cast<float>(f.meta_float("temperature", 1.0));
  c.defaults.top_k = f.meta_int("top_k", 2000);
  c.defaults.top_p = static_cast<float>(f.meta_float("top_p", 1.0));
  c.head_dim = c.n_head > 0 ? c.dim / c.n_head : 0;
  c.validate(f.path());
  return c;
}

void GptConfig::validate(const std::string& path) const {
  auto fail = [&](const std::string& what) -> Error { return Error(path + ": " + what); };
  if (dim <= 0 || n_layer <= 0 || n_head <= 0 || n_kv_head <= 0 || vocab_size <= 0 || grid_size <= 0 ||
      cls_token_num <= 0 || ffn_hidden <= 0)
    throw fail("metadata has a non-positive size (dim, n_layer, n_head, n_kv_head, vocab_size, grid_size, "
               "cls_token_num, ffn_hidden)");
  if (n_head % n_kv_head)
    throw fail("metadata n_kv_head=" + std::to_string(n_kv_head) + " does not divide n_head=" + std::to_string(n_head));
  if (n_kv_head != n_head)
    throw fail("grouped-query attention (n_kv_head=" + std::to_string(n_kv_head) + " < n_head=" +
               std::to_string(n_head) + ") is not supported: the attention op and KV cache take n_kv_head = n_head");
  if (dim % n_head) throw fail("dim " + std::to_string(dim) + " is not divisible by n_head");
  if (head_dim != dim / n_head) throw fail("head_dim must be dim / n_head");
  if (head_dim % 4) throw fail("head_dim " + std::to_string(head_dim) + " must be a multiple of 4 (RoPE)");
  if (qk_norm_groups < 0 || (qk_norm_groups > 0 && n_head % qk_norm_groups))
    throw fail("metadata qk_norm_groups=" + std::to_string(qk_norm_groups) +
               " does not divide n_head=" + std::to_string(n_head));
  if (line_breaks && rope_layout != RopeLayout::sequence_1d)
    throw fail("placed line breaks need 1D RoPE (their positions are sequence indices)");
  auto cap = [&](const char* key, int64_t v, int64_t limit) {
    if (v > limit)
      throw fail("metadata " + std::string(key) + "=" + std::to_string(v) + " is implausibly large (limit " +
                 std::to_string(limit) + ")");
  };
  cap("dim", dim, 65536);
  cap("n_layer", n_layer, 1024);
  cap("vocab_size", vocab_size, 1 << 24);
  cap("grid_size", grid_size, 256);
  cap("num_classes", num_classes, 1 << 24);
  cap("caption_dim", caption_dim, 65536);
  cap("cls_token_num", cls_token_num, 4096);
  cap("ffn_hidden", ffn_hidden, 1 << 20);
}

int64_t GptConfig::rope_index(int64_t index) const {
  if (!line_breaks || index < cls_token_num) return index;
  const int64_t m = index - cls_token_num;
  return cls_token_num + m + m / grid_size;
}

int64_t GptConfig::rope_table_rows() const {
  if (rope_layout == RopeLayout::grid_2d) return grid_size;
  return line_breaks ? seq_len() + grid_size : seq_len();  // one break per row
}

ops::RopePosition GptConfig::rope_position(int64_t index) const {
  if (rope_layout == RopeLayout::sequence_1d) return ops::sequence_position(rope_index(index), rope_table_rows());
  return ops::llamagen_position(index, cls_token_num, grid_size);
}

int64_t GptConfig::llamagen_ffn_hidden(int64_t dim, int64_t multiple_of) {
  const int64_t h = 2 * 4 * dim / 3;
  return (h + multiple_of - 1) / multiple_of * multiple_of;
}

}  // namespace vkspec
