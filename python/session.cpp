#include "python/session.h"

#include <algorithm>

#include "cli/token_images.h"
#include "common/error.h"
#include "frontend/arg_parser.h"
#include "frontend/device_choice.h"

namespace vkspec::python {
namespace {

frontend::ModelCatalog catalog_from(const std::vector<std::string>& model_args) {
  frontend::ArgParser ap("vkspec.Session", frontend::model_file_option_table());
  ap.parse(model_args);
  return frontend::ModelCatalog(frontend::model_files(ap));
}

bool covers(const StrategyNeeds& have, const StrategyNeeds& need) {
  return (have.drafter || !need.drafter) && (have.low_res || !need.low_res) && (have.tokenizer || !need.tokenizer) &&
         (have.neighbours || !need.neighbours) && (have.heads || !need.heads) &&
         (have.latent_heads || !need.latent_heads) && (have.eagle || !need.eagle) && (have.sr_net || !need.sr_net) &&
         (have.latent_upsampler || !need.latent_upsampler) && (have.flashar || !need.flashar);
}

// Whether models loaded for `have` serve `need`. The batch size must match: load_models sizes the
// target's forwards differently for batches (frontend/model_loading.cpp).
bool covers(const frontend::ModelRequest& have, const frontend::ModelRequest& need) {
  for (NeighbourMetric m : need.neighbour_metrics)
    if (std::find(have.neighbour_metrics.begin(), have.neighbour_metrics.end(), m) == have.neighbour_metrics.end())
      return false;
  return covers(have.needs, need.needs) && have.batch == need.batch && have.max_queries >= need.max_queries &&
         have.method_queries >= need.method_queries && have.tokenizer_batch >= need.tokenizer_batch;
}

// `need` widened by what is loaded, so that the next call's method still finds its models.
frontend::ModelRequest merged(const frontend::ModelRequest& have, frontend::ModelRequest need) {
  StrategyNeeds& n = need.needs;
  const StrategyNeeds& h = have.needs;
  n.drafter |= h.drafter, n.low_res |= h.low_res, n.tokenizer |= h.tokenizer, n.neighbours |= h.neighbours;
  n.heads |= h.heads, n.latent_heads |= h.latent_heads, n.eagle |= h.eagle, n.sr_net |= h.sr_net;
  n.latent_upsampler |= h.latent_upsampler, n.flashar |= h.flashar;
  for (NeighbourMetric m : have.neighbour_metrics)
    if (std::find(need.neighbour_metrics.begin(), need.neighbour_metrics.end(), m) == need.neighbour_metrics.end())
      need.neighbour_metrics.push_back(m);
  need.max_queries = std::max(need.max_queries, have.max_queries);
  need.method_queries = std::max(need.method_queries, have.method_queries);
  return need;
}

}  // namespace

Session::Session(const std::vector<std::string>& model_args)
    : model_args_(model_args), catalog_(catalog_from(model_args)), ctx_(frontend::open_device()) {
  target_config();  // a missing or bad model file fails here, not in the first call
}

const GptConfig& Session::target_config() {
  if (!loaded_) models_for({{reference_method_name(), {}}}, 1);
  return loaded_->target->config();
}

const frontend::LoadedModels& Session::models_for(const std::vector<frontend::MethodRun>& runs, int64_t batch) {
  frontend::ModelRequest need = frontend::request_for(catalog_, runs);
  need.batch = batch;
  need.tokenizer = true;      // the images are decoded here
  need.tokenizer_batch = 16;  // decode() goes 16 grids at a time
  if (loaded_ && covers(request_, need)) return *loaded_;
  if (pins_ > 0)
    throw Error("this call needs other models than the session holds, and a steps() iterator still uses them: "
                "finish or delete it first");
  if (loaded_) need = merged(request_, need);
  loaded_.reset();  // free the device memory before loading again
  loaded_ = frontend::load_models(*ctx_, catalog_, need);
  request_ = need;
  return *loaded_;
}

std::vector<Image> Session::decode(const std::vector<const std::vector<int32_t>*>& grids) {
  const GptConfig& cfg = target_config();
  cli::TokenImages decoder(*ctx_, *loaded_->tokenizer, cfg.grid_size, request_.tokenizer_batch);
  std::vector<Image> images;
  for (size_t i = 0; i < grids.size(); i += static_cast<size_t>(decoder.batch())) {
    const size_t end = std::min(grids.size(), i + static_cast<size_t>(decoder.batch()));
    for (Image& im : decoder.decode({grids.begin() + static_cast<long>(i), grids.begin() + static_cast<long>(end)})) {
      if (im.channels == 1) {  // grey repeated over three channels, the layout --npz writes
        std::vector<uint8_t> rgb;
        for (uint8_t v : im.pixels) rgb.insert(rgb.end(), 3, v);
        im.pixels = std::move(rgb);
        im.channels = 3;
      }
      images.push_back(std::move(im));
    }
  }
  return images;
}

std::vector<std::string> Session::take_validation_messages() { return ctx_->instance().validation_log().take(); }

}  // namespace vkspec::python
