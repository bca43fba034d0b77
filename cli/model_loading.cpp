#include "cli/model_loading.h"

#include <algorithm>

#include "cli/method_options.h"
#include "cli/model_paths.h"
#include "engine/model/safetensors.h"

namespace vkspec::cli {

ModelSet LoadedModels::set(Context& ctx) const {
  ModelSet m;
  m.ctx = &ctx;
  m.target = target.get();
  m.drafter = drafter.get();
  m.low_res = low_res.get();
  m.vq = vq.get();
  m.neighbours = neighbours.get();
  m.heads = heads.get();
  return m;
}

LoadedModels load_models(Context& ctx, const ArgParser& ap, const std::vector<MethodRun>& runs, bool want_vq,
                         int64_t vq_batch) {
  const std::string model = ap.get_or("--model", "");
  const std::string target_path = model.empty() ? shipped_model("fmnist_gpt16.safetensors", "--model") : model;
  const GptConfig target_cfg = GptConfig::from_file(SafetensorsFile(target_path));
  StrategyNeeds needs;
  GptOptions gopt;
  gopt.max_queries = 64;
  for (const MethodRun& r : runs) {
    const StrategyDescriptor& d = find_strategy(r.method);
    const StrategyNeeds n = d.needs_for(r.options);
    needs.drafter |= n.drafter;
    needs.low_res |= n.low_res;
    needs.tokenizer |= n.tokenizer;
    needs.neighbours |= n.neighbours;
    needs.heads |= n.heads;
    gopt.max_queries = std::max(gopt.max_queries, d.max_queries_for(r.options, target_cfg));
  }
  LoadedModels m;
  m.target = std::make_unique<Gpt>(ctx, target_path, gopt);
  const GptConfig& cfg = m.target->config();
  if (needs.drafter) {
    const std::string d = ap.get_or("--drafter", "model");
    m.drafter = std::make_unique<Gpt>(ctx, d == "model" || d == "jacobi"
                                               ? shipped_model("fmnist_drafter16.safetensors", "--drafter")
                                               : d);
  }
  if (needs.low_res) {
    const std::string l = ap.get_or("--low-res", "");
    m.low_res = std::make_unique<Gpt>(ctx, l.empty() ? shipped_model("fmnist_gpt8.safetensors", "--low-res") : l, gopt);
  }
  if (want_vq || needs.tokenizer || needs.neighbours) {
    const std::string v = ap.get_or("--vq", "");
    m.vq = std::make_unique<VqModel>(ctx, v.empty() ? shipped_model("fmnist_vq.safetensors", "--vq") : v, DType::F16,
                                     std::max<int64_t>(vq_batch, 1), cfg.grid_size);
    if (m.vq->config().codebook_size != cfg.vocab_size)
      throw Error("the tokenizer " + m.vq->path() + " has " + std::to_string(m.vq->config().codebook_size) +
                  " codebook entries, the model " + m.target->path() + " a vocabulary of " +
                  std::to_string(cfg.vocab_size));
  }
  if (needs.neighbours) m.neighbours = std::make_unique<CodebookNeighbours>(ctx, *m.vq);
  if (needs.heads) {
    const std::string h = ap.get_or("--heads", "");
    m.heads = std::make_unique<DraftHeads>(ctx, h.empty() ? shipped_model("fmnist_gpt16_heads.safetensors", "--heads") : h,
                                           *m.target, gopt.max_queries * 2);
  }
  return m;
}

SamplerSettings sampler_settings(const ArgParser& ap, const GptConfig& cfg) {
  SamplerSettings ss = SamplerSettings::from_defaults(cfg.defaults);
  ss.cfg = static_cast<float>(ap.get_double("--cfg", ss.cfg, 0, 100));
  ss.temperature = static_cast<float>(ap.get_double("--temperature", ss.temperature, 1e-6, 100));
  ss.top_k = ap.get_int("--top-k", ss.top_k, 0, 1 << 24);
  ss.top_p = static_cast<float>(ap.get_double("--top-p", ss.top_p, 1e-6, 1));
  return ss;
}

std::vector<std::string> model_flags() {
  return {"--model", "--vq", "--drafter", "--low-res", "--heads", "--cfg", "--temperature", "--top-k", "--top-p"};
}

}  // namespace vkspec::cli
