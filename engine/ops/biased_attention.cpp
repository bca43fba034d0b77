#include "engine/ops/biased_attention.h"

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {

void biased_attention(CommandStream& s, const HeadRows& q, const HeadRows& k, const HeadRows& v, const TensorView& bias,
                      const TensorView& out, float scale) {
  const char* op = "biased_attention";
  q.validate(op, "q");
  k.validate(op, "k");
  v.validate(op, "v");
  const int64_t T = q.tokens, H = q.heads, D = q.head_dim;
  for (const HeadRows* x : {&k, &v})
    require(x->tokens == T && x->heads == H && x->head_dim == D, op,
            [&] { return "q, k and v differ: " + q.str() + " / " + x->str(); });
  require(T <= kBiasedAttentionMaxTokens, op,
          [&] { return std::to_string(T) + " tokens, more than " + std::to_string(kBiasedAttentionMaxTokens); });
  require(bias.dtype == DType::F32 && bias.shape.rank == 3 && bias.shape[0] == H && bias.shape[1] == T &&
              bias.shape[2] == T,
          op, [&] { return "bias must be f32 [heads, tokens, tokens], got " + bias.shape.str(); });
  require(out.dtype == DType::F32 && out.shape.rank == 2 && out.shape[0] == T && out.shape[1] == H * D, op,
          [&] { return "out must be f32 [tokens, heads * head_dim], got " + out.shape.str(); });
  for (const TensorView* in : {&q.data, &k.data, &v.data, &bias})
    require(in->buffer != out.buffer || in->offset + in->bytes <= out.offset || out.offset + out.bytes <= in->offset,
            op, "out must not overlap the inputs");
  struct {
    uint32_t tokens, heads, head_dim, q_stride, q_offset, k_stride, k_offset, v_stride, v_offset, out_stride;
    float scale;
  } push{static_cast<uint32_t>(T),
         static_cast<uint32_t>(H),
         static_cast<uint32_t>(D),
         static_cast<uint32_t>(q.row_stride),
         static_cast<uint32_t>(q.col_offset),
         static_cast<uint32_t>(k.row_stride),
         static_cast<uint32_t>(k.col_offset),
         static_cast<uint32_t>(v.row_stride),
         static_cast<uint32_t>(v.col_offset),
         static_cast<uint32_t>(H * D),
         scale};
  Context& ctx = s.context();
  s.dispatch(ctx.pipeline(shaders::biased_attention, {static_cast<uint32_t>(kBiasedAttentionMaxTokens)}),
             {q.data, k.data, v.data, bias, out}, push, static_cast<uint32_t>(T), static_cast<uint32_t>(H));
}

}  // namespace vkspec::ops
