#pragma once
// What a strategy is started with: the models it may use and one image's condition, seed, sampler
// settings and method options. Apart from strategy.h because TargetSession, which every strategy
// builds on, takes them too.
#include <array>
#include <cstdint>
#include <memory>

#include "decoding/option_spec.h"
#include "decoding/sampler_settings.h"
#include "engine/model/condition.h"
#include "engine/model/neighbour_metric.h"

namespace vkspec {

class CodebookNeighbours;
class Context;
class DraftHeads;
class EagleDrafter;
class FlashArModel;
class Gpt;
class LatentHeads;
class LatentUpsampler;
class SrNet;
class Tokenizer;

// The codebook neighbour tables loaded, at most one per NeighbourMetric (a bench sweep over
// --metric loads several); a strategy takes the one its --metric names (decoding/neighbour_options.h).
struct NeighbourTables {
  std::array<const CodebookNeighbours*, kNeighbourMetricCount> by_metric{};
  void add(const CodebookNeighbours* table);  // under its own metric; nullptr: nothing
  const CodebookNeighbours* find(NeighbourMetric m) const { return by_metric[static_cast<size_t>(m)]; }
};

// The models a strategy may use; only `target` is required (StrategyDescriptor::needs says what else).
struct ModelSet {
  Context* ctx = nullptr;
  Gpt* target = nullptr;
  Gpt* drafter = nullptr;                       // small GPT on the same token grid (draft-model SD, LANTERN)
  Gpt* low_res = nullptr;                       // GPT on a coarser grid (MuLo-SD)
  Tokenizer* tokenizer = nullptr;               // MuLo-SD's pixel path; not const: decode/encode write its buffers
  NeighbourTables neighbours;                   // relaxed acceptance (LANTERN, MuLo-SD), one table per metric loaded
  DraftHeads* heads = nullptr;                  // spatial draft heads on the target (Hawk, ssd-coupled, --init heads)
  LatentHeads* latent_heads = nullptr;          // SSD's latent heads on the target
  EagleDrafter* eagle = nullptr;                // the EAGLE-style feature drafter on the target (eagle, lantern)
  SrNet* sr_net = nullptr;                      // MuLo-SD's pixel super-resolution net (mulo --upsampler pixel-sr)
  LatentUpsampler* latent_upsampler = nullptr;  // MuLo-SD's latent upsampler (mulo --upsampler latent)
  FlashArModel* flashar = nullptr;              // FlashAR's post-trained model (its own backbone; flashar)
};

struct StrategyInputs {
  // What the image is conditioned on (a class label, caption embeddings); its null form for CFG
  // is the model's own.
  std::shared_ptr<const Condition> condition;
  uint64_t seed = 0;
  SamplerSettings sampler;
  MethodOptions options;
  bool profile = false;  // GPU timestamps per step (StepEvent::device_ms)
};

}  // namespace vkspec
