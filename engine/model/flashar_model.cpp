#include "engine/model/flashar_model.h"

#include <algorithm>

#include "common/error.h"
#include "engine/model/gpt_block.h"
#include "engine/model/line_breaks.h"
#include "engine/model/model_family.h"
#include "engine/model/weights.h"
#include "engine/ops/attention.h"
#include "engine/ops/flashar_fuse.h"
#include "engine/ops/matmul.h"
#include "engine/ops/rms_norm.h"

namespace vkspec {
namespace {

// The file's `flashar.*` integer in [lo, hi], or an Error naming the file and the key.
int64_t flashar_meta(const SafetensorsFile& f, const std::string& path, const std::string& key, int64_t lo,
                     int64_t hi) {
  if (!f.has_meta(key)) throw Error(path + ": metadata " + key + " missing (not a FlashAR file?)");
  const int64_t v = f.meta_int(key);
  if (v < lo || v > hi)
    throw Error(path + ": metadata " + key + " = " + std::to_string(v) + " outside [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  return v;
}

// The file's `flashar.*` word, one of `allowed` (the first when the key is absent: what files
// written before the key meant), or an Error naming the file and the key.
std::string flashar_word(const SafetensorsFile& f, const std::string& path, const std::string& key,
                         const std::vector<std::string>& allowed) {
  const std::string v = f.has_meta(key) ? f.meta(key) : allowed.front();
  if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
  std::string known;
  for (const std::string& a : allowed) known += (known.empty() ? "" : ", ") + a;
  throw Error(path + ": metadata " + key + " = '" + v + "' (known: " + known + ")");
}

// The families whose FlashAR files the engine decodes: LlamaGen's (the released recipes,
// LlamaGen-FlashAR's train_c2i/train_t2i), Janus-Pro's, whose 1D positions are the raster
// sequence's, so a diagonal's cells sit at their raster positions as on LlamaGen's 2D grid, and
// Lumina-mGPT's, whose placed line breaks ride with their row ends (line_breaks.h): a break is
// fed in the forward of its row end's diagonal and its state stands for the row end's, in the
// branch as in the backbone (tools/flashar_lumina.py).
const std::vector<std::string> kFlashArFamilies = {"llamagen-c2i", "llamagen-t2i", "janus-pro", "lumina-mgpt"};

// Throws Error naming the file and family unless FlashAR's diagonals run on the backbone's family.
void require_flashar_family(const GptConfig& cfg, const std::string& path) {
  if (std::find(kFlashArFamilies.begin(), kFlashArFamilies.end(), cfg.family) != kFlashArFamilies.end()) return;
  std::string known;
  for (const std::string& f : kFlashArFamilies) known += (known.empty() ? "" : ", ") + f;
  throw Error(path + ": FlashAR runs on the families " + known + " only, not on " + cfg.family);
}

GptOptions with_branch_prefixes(GptOptions o) {
  o.companion_prefixes.push_back("vertical.");
  o.companion_prefixes.push_back("gate.");
  return o;
}

}  // namespace

FlashArModel::FlashArModel(Context& ctx, const std::string& path, const GptOptions& options)
    : ctx_(ctx),
      backbone_(std::make_unique<Gpt>(ctx, path, with_branch_prefixes(options))),
      branch_cfg_(backbone_->config()) {
  const GptConfig& cfg = backbone_->config();
  WeightStore ws(ctx, path);
  const SafetensorsFile& f = ws.file();
  if (!f.has_meta("role") || f.meta("role") != "flashar")
    throw Error(path + ": not a FlashAR file (metadata role != flashar; tools/train_flashar.py writes one)");
  require_flashar_family(cfg, path);
  start_ = flashar_meta(f, path, "flashar.vertical_start_layer", 0, cfg.n_layer);
  branch_cfg_.n_layer = flashar_meta(f, path, "flashar.vertical_layers", 1, 64);
  const int64_t D = cfg.dim, V = cfg.vocab_size;
  for (int64_t l = 0; l < branch_cfg_.n_layer; ++l)
    layers_.push_back(load_gpt_block(ctx, ws, "vertical.layers." + std::to_string(l) + ".", branch_cfg_,
                                     options.weights));
  norm_ = ws.load("vertical.norm.weight", {D}, DType::F32, "dim=" + std::to_string(D));
  // The vertical head is the family's head post-trained: its tensors under the backbone head's
  // names with the prefix (LlamaGen's vertical.output.weight, Janus-Pro's vertical.gen_head.*).
  head_ = model_family_of(f).make_head(ctx, ws, cfg, backbone_->options(), "vertical.");
  load_gate(ws, path);
  for (const std::string& name : ws.unused())
    if (name.rfind("vertical.", 0) == 0 || name.rfind("gate.", 0) == 0)
      throw Error(path + ": tensor " + name + " is not part of a FlashAR branch of " +
                  std::to_string(branch_cfg_.n_layer) + " block(s)");
  weight_bytes_ = ws.uploaded_bytes();

  const GptOptions& o = backbone_->options();
  const int64_t R = o.batch_rows * o.max_queries;
  rope_table_ = make_rope_table(ctx, branch_cfg_);
  // The branch runs the backbone's placed batch: with line breaks, twice the queries at most.
  act_ = make_block_activations(ctx, o.batch_rows * backbone_->placed_queries(), branch_cfg_, "flashar branch");
  if (cfg.line_breaks) hidden_ = ctx.tensor(DType::F32, {R, D}, "flashar branch states (the method's rows)");
  logits_ = ctx.tensor(DType::F32, {R, V}, "flashar vertical logits");
  attn_ws_ = make_attention_workspace(ctx, cfg, o.batch_rows, backbone_->placed_queries(), "flashar");
}

void FlashArModel::load_gate(WeightStore& ws, const std::string& path) {
  const SafetensorsFile& f = ws.file();
  const int64_t V = config().vocab_size;
  std::vector<float> fc1, fc2;  // fc2: its weights and its bias in one tensor, as the kernel reads them
  if (flashar_word(f, path, "flashar.gate", {"mlp", "constant"}) == "constant") {
    // The released code without --hv-gate: g = sigmoid(mix_logit), the MLP with zero weights.
    ws.host_tensor("gate.mix_logit", {1}, "a constant gate");
    fc1.assign(static_cast<size_t>(2 * V), 0.0f);
    fc2 = {0.0f, f.read_f32("gate.mix_logit")[0]};
    gate_fc1_ = ctx_.tensor(DType::F32, {1, 2 * V}, "flashar gate fc1 (zero)");
    ctx_.upload(gate_fc1_, fc1.data(), fc1.size() * 4);
  } else {
    // Files from before the key normalised each head on its own.
    gate_norm_ = flashar_word(f, path, "flashar.gate_norm", {"per-head", "joint"}) == "joint"
                     ? ops::FlashArGateNorm::Joint
                     : ops::FlashArGateNorm::PerHead;
    const int64_t P = flashar_meta(f, path, "flashar.gate_hidden", 1, 256);  // ops::flashar_fuse's most
    const std::string gate_from = "gate_hidden=" + std::to_string(P) + ", vocab_size=" + std::to_string(V);
    gate_fc1_ = ws.load("gate.fc1.weight", {P, 2 * V}, DType::F32, gate_from);
    ws.host_tensor("gate.fc2.weight", {1, P}, gate_from);
    ws.host_tensor("gate.fc2.bias", {1}, gate_from);
    fc2 = f.read_f32("gate.fc2.weight");
    fc2.push_back(f.read_f32("gate.fc2.bias")[0]);
  }
  gate_fc2_ = ctx_.tensor(DType::F32, {static_cast<int64_t>(fc2.size())}, "flashar gate fc2");
  ctx_.upload(gate_fc2_, fc2.data(), fc2.size() * 4);
}

KvCache FlashArModel::make_branch_cache(const KvCache& backbone_cache) const {
  return KvCache(ctx_, branch_cfg_, backbone_cache.batch(), backbone_cache.slots(), backbone_cache.dtype());
}

FlashArOutputs FlashArModel::forward(CommandStream& s, const GptBatch& batch, const KvCache& backbone_cache,
                                     const KvCache& branch_cache) {
  const int64_t R = batch.batch_rows() * batch.tokens_per_row();
  if (branch_cache.batch() != backbone_cache.batch() || branch_cache.slots() != backbone_cache.slots() ||
      branch_cache.dtype() != backbone_cache.dtype())
    throw Error(path() + ": the branch's KV cache does not match the backbone's");
  // With placed line breaks the backbone and the branch run the placed batch (the same one:
  // GptBatch::placed keeps it); each method query then reads its own state or its break's.
  const GptBatch& run = batch.placed(backbone_cache);
  const int64_t Rp = run.batch_rows() * run.tokens_per_row();
  const TensorView x = act_.x.view().rows(0, Rp), xn = act_.xn.view().rows(0, Rp);
  const GptOutputs h = backbone_->forward(s, batch, backbone_cache, GptTap{start_, x});
  const GptBlockForward blocks{branch_cfg_, act_, rope_table_, attn_ws_, run, Rp, branch_cache};
  for (int64_t l = 0; l < branch_cfg_.n_layer; ++l) record_gpt_block(s, layers_[static_cast<size_t>(l)], l, blocks);
  ops::rms_norm(s, x, norm_, xn, branch_cfg_.norm_eps);
  TensorView states = xn;
  if (&run != &batch) {
    states = hidden_.view().rows(0, R);
    for (const PlacedQueries::Run& r : batch.placed_runs()->rows)
      s.copy(xn.rows(r.from, r.count), states.rows(r.to, r.count));
  }
  ops::MatmulFusion per_image;  // the head's kernel as for one image's rows, as the backbone's
  per_image.rows_per_image = batch.plan_rows_per_image();
  const TensorView v = logits_.view().rows(0, R);
  head_->record(s, states, v, per_image);
  return {h.logits, v};
}

void FlashArModel::fuse(CommandStream& s, const FlashArOutputs& heads, const TensorView& sources,
                        const TensorView& fused, const TensorView& gates) const {
  ops::flashar_fuse(s, heads.h_logits, heads.v_logits, sources, {gate_fc1_.view(), gate_fc2_.view(), gate_norm_}, fused,
                    gates);
}

}  // namespace vkspec
