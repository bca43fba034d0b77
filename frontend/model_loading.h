#pragma once
// What a front end's runs need of the catalog's models (request_for), and loading them onto one
// context (load_models; a front end on several devices loads a set per device's context): the
// target, then the drafter, low-resolution model, tokenizer, codebook neighbours, draft heads,
// latent heads, EAGLE drafter, SR net and latent upsampler that the runs need (an error when the
// file is missing) or that the front end keeps in case a later run wants them (the viewer's panel;
// skipped when the catalog has no companion file).
#include <memory>
#include <string>
#include <vector>

#include "decoding/strategy.h"
#include "engine/model/codebook_neighbours.h"
#include "engine/model/draft_heads.h"
#include "engine/model/eagle_drafter.h"
#include "engine/model/flashar_model.h"
#include "engine/model/latent_heads.h"
#include "engine/model/latent_upsampler.h"
#include "engine/model/sr_net.h"
#include "engine/model/tokenizer.h"
#include "frontend/model_catalog.h"

namespace vkspec::frontend {

struct MethodRun {
  std::string method;
  MethodOptions options;
  int64_t batch = 1;  // images sharing each forward (--batch)
};

struct ModelRequest {
  StrategyNeeds needs;  // must load
  // drafter, low_res, heads, latent_heads, eagle, sr_net, latent_upsampler, flashar: load when the catalog
  // has a companion file
  StrategyNeeds companions;
  bool tokenizer = false;       // the front end decodes images itself
  int64_t tokenizer_batch = 1;  // the most images per decode call
  int64_t max_queries = 64;     // per target forward (a window of L drafts needs L + 1)
  int64_t method_queries = 1;   // the most the runs' methods themselves need (max_queries without its floor)
  // Images sharing each forward (--batch): the target is loaded for 2 rows per image and, beyond
  // one image, for the methods' own queries (at least 64 rows in all, for t2i's prefill chunks).
  int64_t batch = 1;
  // With needs.neighbours: a table per metric listed (none listed: the default metric's).
  std::vector<NeighbourMetric> neighbour_metrics;
};

// What `runs` need, with max_queries for the catalog's target (whose config is read here).
ModelRequest request_for(const ModelCatalog& catalog, const std::vector<MethodRun>& runs);

struct LoadedModels {
  std::unique_ptr<Gpt> target, drafter, low_res;
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<std::unique_ptr<CodebookNeighbours>> neighbours;  // one per metric requested
  std::unique_ptr<DraftHeads> heads;
  std::unique_ptr<LatentHeads> latent_heads;
  std::unique_ptr<EagleDrafter> eagle;
  std::unique_ptr<SrNet> sr_net;
  std::unique_ptr<LatentUpsampler> latent_upsampler;
  std::unique_ptr<FlashArModel> flashar;
  ModelSet set(Context& ctx) const;
};

LoadedModels load_models(Context& ctx, const ModelCatalog& catalog, const ModelRequest& request);

}  // namespace vkspec::frontend
