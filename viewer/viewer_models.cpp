#include "viewer/viewer_models.h"

namespace vkspec::viewer {
namespace {

// A window of L drafts needs L + 1 queries; the panel may ask for any window up to 256.
constexpr int64_t kMaxQueries = 257;

}  // namespace

std::optional<Trace> read_replay(const ViewerOptions& options) {
  if (options.trace.empty()) return std::nullopt;
  Trace trace = read_trace(options.trace);
  const int64_t n = static_cast<int64_t>(trace.images.size());
  if (options.trace_image >= n || options.trace_compare >= n)
    throw Error("trace " + options.trace + " holds " + std::to_string(n) +
                " image(s); --image and --compare-image "
                "must be below that");
  return trace;
}

ViewerModels::ViewerModels(Context& ctx, const frontend::ModelCatalog& catalog, std::optional<Trace> replay)
    : ctx_(ctx), replay_(std::move(replay)) {
  if (replay_) {
    grid_ = replay_->config.grid_size;
    load_replay_tokenizer(catalog);
    return;
  }
  frontend::ModelRequest request;
  request.needs.neighbours = true;  // relaxed acceptance (--accept lantern, any --metric) from the panel
  for (int metric = 0; metric < kNeighbourMetricCount; ++metric)
    request.neighbour_metrics.push_back(static_cast<NeighbourMetric>(metric));
  request.companions.drafter = request.companions.low_res = request.companions.heads = request.companions.latent_heads =
      request.companions.eagle = request.companions.sr_net = request.companions.latent_upsampler =
          request.companions.flashar = true;
  request.max_queries = kMaxQueries;
  loaded_ = frontend::load_models(ctx, catalog, request);
  grid_ = loaded_.target->config().grid_size;
  num_classes_ = loaded_.target->config().num_classes;
  // The frame decoder runs on the decode thread between steps; MuLo-SD's pixel path runs inside
  // them on the strategies' tokenizer, so the two never share buffers.
  frame_tokenizer_ = load_tokenizer(ctx, loaded_.tokenizer->path(), DType::F16, 1, grid_);
}

void ViewerModels::load_replay_tokenizer(const frontend::ModelCatalog& catalog) {
  const std::string path = catalog.companion(frontend::ModelRole::Tokenizer);
  if (path.empty()) {
    decoder_note_ = "no VQ decoder given (--vq FILE): showing token ids as colours";
    return;
  }
  try {
    frame_tokenizer_ = load_tokenizer(ctx_, path, DType::F16, 1, grid_);
    if (frame_tokenizer_->codebook_size() < replay_->config.vocab_size) {
      decoder_note_ = "VQ decoder " + path + " has " + std::to_string(frame_tokenizer_->codebook_size()) +
                      " codes, the trace uses " + std::to_string(replay_->config.vocab_size) +
                      ": showing token ids as colours";
      frame_tokenizer_.reset();
    }
  } catch (const Error& e) {
    if (!catalog.given(frontend::ModelRole::Tokenizer).empty()) throw;  // asked for: say why it cannot be used
    decoder_note_ = std::string("shipped VQ decoder unusable (") + e.what() + "): showing token ids as colours";
    frame_tokenizer_.reset();
  }
}

bool ViewerModels::takes_prompt() const { return !replay_ && loaded_.target->takes_prompt(); }

std::shared_ptr<const Condition> ViewerModels::prompt_condition(const std::string& prompt) const {
  if (replay_) throw Error("a replayed trace runs no model: it cannot take a prompt");
  return loaded_.target->prompt_condition(prompt);
}

std::string ViewerModels::target_name() const {
  if (replay_) return "trace";
  return loaded_.target->path() + " (" + loaded_.target->config().family + ")";
}

SamplerSettings ViewerModels::default_sampler() const {
  return replay_ ? replay_->config.sampler : SamplerSettings::from_defaults(loaded_.target->config().defaults);
}

TraceConfig ViewerModels::trace_config(const SamplerSettings& sampler) const {
  if (replay_) return replay_->config;
  TraceConfig tc;
  tc.model = loaded_.target->path();
  tc.grid_size = grid_;
  tc.vocab_size = loaded_.target->config().vocab_size;
  tc.sampler = sampler;
  return tc;
}

std::unique_ptr<FrameDecoder> ViewerModels::make_frame_decoder() {
  if (frame_tokenizer_) return std::make_unique<TokenizerFrameDecoder>(ctx_, *frame_tokenizer_, grid_);
  return std::make_unique<PaletteFrameDecoder>(grid_);
}

}  // namespace vkspec::viewer
