#include "engine/model/gpt_block.h"

#include "engine/vk/command_stream.h"

namespace vkspec {

GptBlockWeights load_gpt_block(Context& ctx, WeightStore& w, const std::string& p, const GptConfig& cfg, DType wt,
                               bool attention_norm) {
  const int64_t D = cfg.dim, H = cfg.ffn_hidden;
  const std::string from = "dim=" + std::to_string(D), hf = "ffn hidden=" + std::to_string(H);
  GptBlockWeights L;
  if (attention_norm) L.attention_norm = w.load(p + "attention_norm.weight", {D}, DType::F32, from);
  L.ffn_norm = w.load(p + "ffn_norm.weight", {D}, DType::F32, from);
  L.wqkv = w.load(p + "attention.wqkv.weight", {3 * D, D}, wt, from);
  L.wo = w.load(p + "attention.wo.weight", {D, D}, wt, from);
  Tensor w1 = w.load(p + "feed_forward.w1.weight", {H, D}, wt, hf);
  Tensor w3 = w.load(p + "feed_forward.w3.weight", {H, D}, wt, hf);
  L.w2 = w.load(p + "feed_forward.w2.weight", {D, H}, wt, hf);
  L.w13 = ctx.tensor(wt, {2 * H, D}, p + "feed_forward.w1|w3");
  CommandStream copies(ctx);
  copies.copy(w1.view(), L.w13.view().rows(0, H));
  copies.copy(w3.view(), L.w13.view().rows(H, H));
  copies.submit_and_wait();
  return L;
}

}  // namespace vkspec
