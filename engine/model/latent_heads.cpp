#include "engine/model/latent_heads.h"

#include "common/error.h"
#include "engine/model/base_fit.h"
#include "engine/model/weights.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/matmul.h"

namespace vkspec {
namespace {

// Metadata the engine's contract depends on, with the one value it implements.
constexpr MetaValue kContract[] = {{"heads", "h,v"},
                                   {"placement", "post_norm"},
                                   {"predicts", "post_norm_hidden"},
                                   {"block", "residual_silu_mlp"},
                                   {"application", "recursive"},
                                   {"output", "shared_base_output"}};

}  // namespace

LatentHeads::LatentHeads(Context& ctx, const std::string& path, const Gpt& base, int64_t max_rows)
    : path_(path), base_(base), max_rows_(max_rows) {
  if (max_rows < 1) throw Error(path + ": latent heads need at least one row per call");
  WeightStore ws(ctx, path);
  const SafetensorsFile& f = ws.file();
  require_kind(f, path, "latent_heads", "a latent-heads file");
  require_fits_base(f, path, "latent heads", base);
  const int64_t dim = base.config().dim;
  require_meta_values(f, path, kContract);
  const int64_t hidden = f.meta_int("hidden"), depth = f.meta_int("depth");
  if (hidden < 1 || depth < 1)
    throw Error(path + ": hidden " + std::to_string(hidden) + " and depth " + std::to_string(depth) +
                " must be positive");
  rollout_h_ = f.meta_int("rollout_h", 0);
  rollout_v_ = f.meta_int("rollout_v", 0);
  const DType w = base.options().weights;
  const std::string from = "dim=" + std::to_string(dim) + ", hidden=" + std::to_string(hidden);
  for (const char* axis : {"h", "v"}) {
    std::vector<Block>& blocks = axis[0] == 'h' ? h_ : v_;
    for (int64_t i = 0; i < depth; ++i) {
      const std::string p = std::string("latent_heads.") + axis + "." + std::to_string(i) + ".";
      Block b;
      b.fc1_w = ws.load(p + "fc1.weight", {hidden, dim}, w, from);
      b.fc1_b = ws.load(p + "fc1.bias", {hidden}, DType::F32, from);
      b.fc2_w = ws.load(p + "fc2.weight", {dim, hidden}, w, from);
      b.fc2_b = ws.load(p + "fc2.bias", {dim}, DType::F32, from);
      blocks.push_back(std::move(b));
    }
  }
  const auto unused = ws.unused();
  if (!unused.empty())
    throw Error(path + ": unexpected tensor " + unused[0] + " (depth " + std::to_string(depth) + ")");
  inner_ = ctx.tensor(DType::F32, {max_rows, hidden}, "latent head inner layer");
  delta_ = ctx.tensor(DType::F32, {max_rows, dim}, "latent head update");
}

void LatentHeads::check_rows(const TensorView& t, const char* what) const {
  const int64_t dim = base_.config().dim;
  if (t.shape.rank != 2 || t.shape[1] != dim || t.shape[0] < 1 || t.shape[0] > max_rows_)
    throw Error(path_ + ": " + what + " must be f32 [1.." + std::to_string(max_rows_) + ", " + std::to_string(dim) +
                "], got " + t.shape.str());
}

void LatentHeads::apply(CommandStream& s, Axis a, const TensorView& in, const TensorView& out) {
  check_rows(in, "head input");
  check_rows(out, "head output");
  if (in.shape[0] != out.shape[0]) throw Error(path_ + ": head input and output rows differ");
  const int64_t rows = in.shape[0];
  const TensorView inner = inner_.view().rows(0, rows), delta = delta_.view().rows(0, rows);
  TensorView x = in;
  for (const Block& b : a == Axis::Horizontal ? h_ : v_) {
    ops::matmul(s, x, b.fc1_w.view(), inner);
    ops::bias_act(s, inner, b.fc1_b.view(), inner, ops::Activation::Silu);
    ops::matmul(s, inner, b.fc2_w.view(), delta);
    // The residual: a block starts as the identity.
    ops::bias_act(s, delta, b.fc2_b.view(), out, ops::Activation::None, x);
    x = out;
  }
}

void LatentHeads::logits(CommandStream& s, const TensorView& states, const TensorView& out) const {
  if (states.shape.rank != 2 || states.shape[1] != base_.config().dim)
    throw Error(path_ + ": states must be f32 [rows, " + std::to_string(base_.config().dim) + "], got " +
                states.shape.str());
  base_.project(s, states, out);
}

}  // namespace vkspec
