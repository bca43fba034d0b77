#include "engine/model/draft_heads.h"

#include "engine/model/weights.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/matmul.h"
#include "engine/ops/swish.h"
#include "engine/vk/error.h"

namespace vkspec {

DraftHeads::DraftHeads(Context& ctx, const std::string& path, const Gpt& base, int64_t max_rows)
    : path_(path), base_(base), max_rows_(max_rows) {
  WeightStore ws(ctx, path);
  const SafetensorsFile& f = ws.file();
  if (!f.has_meta("vkspec.kind") || f.meta("vkspec.kind") != "draft_heads")
    throw Error(path + ": not a draft-heads file (metadata vkspec.kind != draft_heads)");
  const GptConfig& cfg = base.config();
  const int64_t dim = f.meta_int("dim");
  if (dim != cfg.dim || f.meta_int("vocab_size") != cfg.vocab_size || f.meta_int("grid_size") != cfg.grid_size)
    throw Error(path + ": heads for dim " + std::to_string(dim) + ", vocab " + f.meta("vocab_size") + ", grid " +
                f.meta("grid_size") + " do not fit the base model " + base.path() + " (dim " +
                std::to_string(cfg.dim) + ", vocab " + std::to_string(cfg.vocab_size) + ", grid " +
                std::to_string(cfg.grid_size) + ")");
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
  const int64_t W = cfg.grid_size;
  for (size_t i = 0; i < names.size(); ++i) {
    const int64_t off = offsets[i];
    if (off < 1 || off >= cfg.image_tokens()) throw Error(path + ": head " + names[i] + " has offset " + std::to_string(off));
    const bool vertical = names[i][0] == 'v';
    if (vertical ? off % W != 0 : off >= W)
      throw Error(path + ": head " + names[i] + " offset " + std::to_string(off) + " is not " +
                  (vertical ? "a whole number of rows" : "within a row"));
    const std::string p = "draft_heads." + names[i] + ".linear.";
    heads_.push_back({names[i], off, vertical, ws.load(p + "weight", {dim, dim}, base.options().weights),
                      ws.load(p + "bias", {dim}, DType::F32)});
    logits_.push_back(ctx.tensor(DType::F32, {max_rows, cfg.vocab_size}, "logits of head " + names[i]));
  }
  const auto unused = ws.unused();
  if (!unused.empty()) throw Error(path + ": unexpected tensor " + unused[0]);
  y_ = ctx.tensor(DType::F32, {max_rows, dim}, "draft head activations");
  act_ = ctx.tensor(DType::F32, {max_rows, dim}, "draft head residual");
}

int DraftHeads::index(const std::string& name) const {
  for (size_t i = 0; i < heads_.size(); ++i)
    if (heads_[i].name == name) return static_cast<int>(i);
  return -1;
}

TensorView DraftHeads::logits(CommandStream& s, int k, const TensorView& hidden) {
  const int64_t rows = hidden.shape[0], dim = base_.config().dim;
  if (k < 0 || k >= static_cast<int>(heads_.size())) throw Error(path_ + ": no head " + std::to_string(k));
  if (hidden.shape.rank != 2 || hidden.shape[1] != dim || rows < 1 || rows > max_rows_)
    throw Error(path_ + ": hidden must be f32 [1.." + std::to_string(max_rows_) + ", " + std::to_string(dim) +
                "], got " + hidden.shape.str());
  const DraftHead& h = heads_[static_cast<size_t>(k)];
  const TensorView y = y_.view().rows(0, rows), a = act_.view().rows(0, rows);
  ops::matmul(s, hidden, h.w, y);
  ops::bias_act(s, y, h.b, y, false);
  ops::swish(s, y, a);
  ops::add(s, a, hidden, a);
  const TensorView out = logits_[static_cast<size_t>(k)].view().rows(0, rows);
  ops::matmul(s, a, base_.output_weight(), out);
  return out;
}

}  // namespace vkspec
