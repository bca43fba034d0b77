#include "frontend/model_loading.h"

#include <algorithm>
#include <utility>

#include "engine/model/model_family.h"
#include "engine/model/safetensors.h"

namespace vkspec::frontend {

ModelSet LoadedModels::set(Context& ctx) const {
  ModelSet m;
  m.ctx = &ctx;
  m.target = target.get();
  m.drafter = drafter.get();
  m.low_res = low_res.get();
  m.tokenizer = tokenizer.get();
  for (const auto& t : neighbours) m.neighbours.add(t.get());
  m.heads = heads.get();
  m.latent_heads = latent_heads.get();
  m.eagle = eagle.get();
  m.sr_net = sr_net.get();
  m.latent_upsampler = latent_upsampler.get();
  m.flashar = flashar.get();
  return m;
}

ModelRequest request_for(const ModelCatalog& catalog, const std::vector<MethodRun>& runs) {
  const GptConfig target = gpt_config_of(SafetensorsFile(catalog.path(ModelRole::Target)));
  ModelRequest r;
  std::unique_ptr<GptConfig> low_res;  // read once, when a method needs it
  for (const MethodRun& run : runs) {
    const StrategyDescriptor& d = find_strategy(run.method);
    const StrategyNeeds n = d.needs_for(run.options);
    if (n.low_res && !low_res)
      low_res = std::make_unique<GptConfig>(gpt_config_of(SafetensorsFile(catalog.path(ModelRole::LowRes))));
    r.needs.drafter |= n.drafter;
    r.needs.low_res |= n.low_res;
    r.needs.tokenizer |= n.tokenizer;
    r.needs.neighbours |= n.neighbours;
    if (n.neighbours && std::find(r.neighbour_metrics.begin(), r.neighbour_metrics.end(), n.neighbour_metric) ==
                            r.neighbour_metrics.end())
      r.neighbour_metrics.push_back(n.neighbour_metric);
    r.needs.heads |= n.heads;
    r.needs.latent_heads |= n.latent_heads;
    r.needs.eagle |= n.eagle;
    r.needs.sr_net |= n.sr_net;
    r.needs.latent_upsampler |= n.latent_upsampler;
    r.needs.flashar |= n.flashar;
    const int64_t q = d.max_queries_for(run.options, target, n.low_res ? low_res.get() : nullptr);
    r.max_queries = std::max(r.max_queries, q);
    r.method_queries = std::max(r.method_queries, q);
  }
  return r;
}

namespace {

// What a model's condition is made of: a prompt family's positions and text vocabulary (the
// backbone embeds the target's prompt ids through its own table), a caption's positions and
// width, or the classes.
std::string condition_shape(const GptConfig& c) {
  if (c.input == ConditionInput::Prompt)
    return std::to_string(c.cls_token_num) + " prompt positions, text vocabulary " + std::to_string(c.text_vocab);
  if (c.model_type == ModelType::t2i)
    return std::to_string(c.cls_token_num) + " caption positions of " + std::to_string(c.caption_dim);
  return std::to_string(c.num_classes) + " classes";
}

// A FlashAR file decodes with its own backbone, but its images go through the target's tokenizer
// and judges, and its condition is the one the target's inputs make (a class, caption embeddings,
// a prompt): the two must agree on all of these. The message lists each that differs.
void check_flashar_fits(const GptConfig& fc, const GptConfig& cfg, const std::string& flashar,
                        const std::string& target) {
  const auto facts = [](const GptConfig& c) {
    return std::vector<std::pair<std::string, std::string>>{{"family", c.family},
                                                            {"vocabulary", std::to_string(c.vocab_size)},
                                                            {"grid", std::to_string(c.grid_size)},
                                                            {"condition", condition_shape(c)}};
  };
  const auto mine = facts(fc), theirs = facts(cfg);
  std::string differ;
  for (size_t i = 0; i < mine.size(); ++i)
    if (mine[i].second != theirs[i].second)
      differ +=
          (differ.empty() ? "" : "; ") + mine[i].first + " " + mine[i].second + ", the target's " + theirs[i].second;
  if (!differ.empty())
    throw Error("the FlashAR model " + flashar + " was not post-trained from the target " + target + " (" + differ +
                ")");
}

}  // namespace

LoadedModels load_models(Context& ctx, const ModelCatalog& catalog, const ModelRequest& request) {
  const StrategyNeeds& needs = request.needs;
  // A needed model's file must resolve; a companion's may be absent.
  auto file = [&](bool needed, bool companion, ModelRole role) -> std::string {
    if (needed) return catalog.path(role);
    return companion ? catalog.companion(role) : "";
  };
  GptOptions gopt;
  gopt.max_queries = request.max_queries;
  if (request.batch > 1) {
    gopt.batch_rows = 2 * request.batch;
    gopt.max_queries = std::max<int64_t>(request.method_queries, (64 + request.batch - 1) / request.batch);
  }
  LoadedModels m;
  m.target = std::make_unique<Gpt>(ctx, catalog.path(ModelRole::Target), gopt);
  const GptConfig& cfg = m.target->config();
  if (const std::string d = file(needs.drafter, request.companions.drafter, ModelRole::Drafter); !d.empty())
    m.drafter = std::make_unique<Gpt>(ctx, d);
  if (const std::string l = file(needs.low_res, request.companions.low_res, ModelRole::LowRes); !l.empty())
    m.low_res = std::make_unique<Gpt>(ctx, l, gopt);
  if (request.tokenizer || needs.tokenizer || needs.neighbours) {
    // --vq, else the VQ decoder the target's file names (a converted Janus-Pro), else the shipped one.
    const std::string& given_vq = catalog.given(ModelRole::Tokenizer);
    const std::string vq = !given_vq.empty() || cfg.vq_file.empty() ? catalog.path(ModelRole::Tokenizer) : cfg.vq_file;
    m.tokenizer = load_tokenizer(ctx, vq, DType::F16, std::max<int64_t>(request.tokenizer_batch, 1), cfg.grid_size);
    if (m.tokenizer->codebook_size() != cfg.vocab_size)
      throw Error("the tokenizer " + m.tokenizer->path() + " has " + std::to_string(m.tokenizer->codebook_size()) +
                  " codebook entries, the model " + m.target->path() + " a vocabulary of " +
                  std::to_string(cfg.vocab_size));
  }
  if (needs.neighbours) {
    std::vector<NeighbourMetric> metrics = request.neighbour_metrics;
    if (metrics.empty()) metrics.push_back(NeighbourMetric::L2);
    for (NeighbourMetric metric : metrics)
      m.neighbours.push_back(std::make_unique<CodebookNeighbours>(ctx, *m.tokenizer, CodebookNeighbours::kDefaultMax,
                                                                  metric));
  }
  if (const std::string h = file(needs.heads, request.companions.heads, ModelRole::Heads); !h.empty())
    m.heads = std::make_unique<DraftHeads>(ctx, h, *m.target, gopt.batch_rows * gopt.max_queries);  // every lane's rows
  if (const std::string h = file(needs.latent_heads, request.companions.latent_heads, ModelRole::LatentHeads);
      !h.empty())
    m.latent_heads = std::make_unique<LatentHeads>(ctx, h, *m.target, request.max_queries * 2);
  if (const std::string e = file(needs.eagle, request.companions.eagle, ModelRole::Eagle); !e.empty())
    m.eagle = std::make_unique<EagleDrafter>(ctx, e, *m.target, request.max_queries);
  // MuLo-SD's trained upsamplers work on the tokenizer's pixels / codebook, for one image of the
  // low-resolution model's grid (half the target's when there is none yet).
  const int64_t low_grid = m.low_res ? m.low_res->config().grid_size : cfg.grid_size / 2;
  if (const std::string f = file(needs.sr_net, request.companions.sr_net, ModelRole::SrNet); !f.empty() && m.tokenizer)
    m.sr_net = std::make_unique<SrNet>(ctx, f, low_grid * m.tokenizer->downsample());
  if (const std::string f =
          file(needs.latent_upsampler, request.companions.latent_upsampler, ModelRole::LatentUpsampler);
      !f.empty() && m.tokenizer)
    m.latent_upsampler = std::make_unique<LatentUpsampler>(ctx, f, *m.tokenizer, low_grid);
  if (const std::string f = file(needs.flashar, request.companions.flashar, ModelRole::FlashAr); !f.empty()) {
    m.flashar = std::make_unique<FlashArModel>(ctx, f, gopt);
    check_flashar_fits(m.flashar->config(), cfg, f, m.target->path());
  }
  return m;
}

}  // namespace vkspec::frontend
