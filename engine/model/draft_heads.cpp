#include "engine/model/draft_heads.h"

#include "common/error.h"
#include "engine/model/base_fit.h"
#include "engine/model/weights.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/matmul.h"

namespace vkspec {

DraftHeads::DraftHeads(Context& ctx, const std::string& path, const Gpt& base, int64_t max_rows)
    : path_(path), base_(base), max_rows_(max_rows) {
  WeightStore ws(ctx, path);
  const SafetensorsFile& f = ws.file();
  require_kind(f, path, "draft_heads", "a draft-heads file");
  require_fits_base(f, path, "heads", base);
  const GptConfig& cfg = base.config();
  const int64_t dim = cfg.dim;
  if (f.has_meta("placement") && f.meta("placement") != "post_norm")
    throw Error(path + ": heads placed at '" + f.meta("placement") + "', the engine supports post_norm");
  std::vector<std::string> names;
  {
    const std::string& list = f.meta("heads");
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = list.find(',', start);
      const std::string n = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!n.empty()) names.push_back(n);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  const std::vector<int64_t> offsets = f.meta_int_list("offsets");
  if (names.empty() || offsets.size() != names.size())
    throw Error(path + ": metadata lists " + std::to_string(names.size()) + " heads and " +
                std::to_string(offsets.size()) + " offsets");
  const int64_t W = cfg.grid_size, H = static_cast<int64_t>(names.size());
  w_ = ctx.tensor(base.options().weights, {H * dim, dim}, "draft head weights");
  b_ = ctx.tensor(DType::F32, {H * dim}, "draft head biases");
  std::vector<Tensor> loaded;  // each head's tensors until they are copied into the stacks
  std::vector<CopyRegion> stack;
  for (int64_t i = 0; i < H; ++i) {
    const std::string& name = names[static_cast<size_t>(i)];
    const int64_t off = offsets[static_cast<size_t>(i)];
    if (off < 1 || off >= cfg.image_tokens())
      throw Error(path + ": head " + name + " has offset " + std::to_string(off));
    const bool vertical = name[0] == 'v';
    if (vertical ? off % W != 0 : off >= W)
      throw Error(path + ": head " + name + " offset " + std::to_string(off) + " is not " +
                  (vertical ? "a whole number of rows" : "within a row"));
    const std::string p = "draft_heads." + name + ".linear.";
    loaded.push_back(ws.load(p + "weight", {dim, dim}, base.options().weights));
    stack.push_back({loaded.back().view(), w_.view().rows(i * dim, dim)});
    loaded.push_back(ws.load(p + "bias", {dim}, DType::F32));
    stack.push_back({loaded.back().view(), b_.view().rows(i * dim, dim)});
    heads_.push_back({name, off, vertical});
  }
  const auto unused = ws.unused();
  if (!unused.empty()) throw Error(path + ": unexpected tensor " + unused[0]);
  CommandStream s(ctx);
  s.copy(stack);
  s.submit_and_wait();
  inner_ = ctx.tensor(DType::F32, {max_rows, H * dim}, "draft head inner layers");
  picked_h_ = ctx.tensor(DType::F32, {H * max_rows, dim}, "draft head picked hidden states");
  picked_act_ = ctx.tensor(DType::F32, {H * max_rows, dim}, "draft head picked activations");
  logits_ = ctx.tensor(DType::F32, {H * max_rows, cfg.vocab_size}, "draft head logits");
}

int DraftHeads::index(const std::string& name) const {
  for (size_t i = 0; i < heads_.size(); ++i)
    if (heads_[i].name == name) return static_cast<int>(i);
  return -1;
}

TensorView DraftHeads::logits(CommandStream& s, int k, const TensorView& hidden) {
  if (k < 0 || k >= static_cast<int>(heads_.size())) throw Error(path_ + ": no head " + std::to_string(k));
  std::vector<std::pair<int, int64_t>> picks;
  for (int64_t r = 0; r < (hidden.shape.rank == 2 ? hidden.shape[0] : 0); ++r) picks.push_back({k, r});
  return logits_at(s, hidden, picks);
}

TensorView DraftHeads::logits_at(CommandStream& s, const TensorView& hidden,
                                 const std::vector<std::pair<int, int64_t>>& picks) {
  const int64_t rows = hidden.shape[0], dim = base_.config().dim, H = static_cast<int64_t>(heads_.size());
  const int64_t n = static_cast<int64_t>(picks.size());
  if (hidden.shape.rank != 2 || hidden.shape[1] != dim || rows < 1 || rows > max_rows_)
    throw Error(path_ + ": hidden must be f32 [1.." + std::to_string(max_rows_) + ", " + std::to_string(dim) +
                "], got " + hidden.shape.str());
  if (n < 1 || n > H * max_rows_)
    throw Error(path_ + ": " + std::to_string(n) + " (head, row) picks, at most " + std::to_string(H * max_rows_));
  // Each pick's hidden row and its head's part of the inner row [rows, heads * dim].
  std::vector<CopyRegion> h_rows, act_rows;
  const TensorView flat = inner_.view().reshape({max_rows_ * H, dim});
  for (int64_t i = 0; i < n; ++i) {
    const auto [k, r] = picks[static_cast<size_t>(i)];
    if (k < 0 || k >= H || r < 0 || r >= rows)
      throw Error(path_ + ": pick (head " + std::to_string(k) + ", row " + std::to_string(r) + ") outside " +
                  std::to_string(H) + " heads and " + std::to_string(rows) + " rows");
    h_rows.push_back({hidden.rows(r, 1), picked_h_.view().rows(i, 1)});
    act_rows.push_back({flat.rows(r * H + k, 1), picked_act_.view().rows(i, 1)});
  }
  // Every head's SiLU(W_k h + b_k) on every row: cheap next to the projection onto the vocabulary.
  const TensorView inner = inner_.view().rows(0, rows);
  ops::matmul(s, hidden, w_, inner);
  ops::bias_act(s, inner, b_, inner, ops::Activation::Silu);
  // Then h + SiLU(...) and the output projection of the picked rows.
  s.copy(h_rows);
  s.copy(act_rows);
  const TensorView a = picked_act_.view().rows(0, n), out = logits_.view().rows(0, n);
  ops::add(s, a, picked_h_.view().rows(0, n), a);
  base_.project(s, a, out);
  return out;
}

}  // namespace vkspec
