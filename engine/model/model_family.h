#pragma once
// Model families, registered by name the way decoding methods are (decoding/strategy_registry.h):
// a family says which checkpoint files are its own, reads their configuration, and makes the parts
// of a GPT forward that differ between families (GptFamilyParts): how a condition becomes the
// prefix rows, how an image token is embedded, the RoPE layout, and (ImageHead) how image logits
// leave, which a post-trained model carrying a second head of the family's kind (FlashAR's
// vertical head) makes from the same factory under its own name prefix. The
// transformer blocks, the KV cache, batches and every decoding method are shared, so each method
// runs on each family. A family's file registers it from a static initialiser; nothing outside
// that file names it (docs/architecture.md, "A model family").
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/gpt_config.h"
#include "engine/model/image_head.h"
#include "engine/model/safetensors.h"
#include "engine/model/safetensors_writer.h"

namespace vkspec {

class Context;
class WeightStore;
class GptFamilyParts;
struct GptOptions;

struct ModelFamilyDescriptor {
  std::string name;       // "llamagen-c2i"; in messages, `vkspec models` and traces
  int order = 0;          // listing order
  std::string summary;    // one line
  std::string reference;  // the paper or released code the family follows
  // Whether a checkpoint file (its metadata) is this family's.
  std::function<bool(const SafetensorsFile&)> claims;
  // The configuration from the file's metadata; throws Error naming the file and key.
  std::function<GptConfig(const SafetensorsFile&)> config;
  // Benchmark shapes of released models (`vkspec bench --synthetic NAME`) and a model file of one
  // with generated weights (grid 0: the shape's own token grid); none where the list is empty.
  std::vector<std::string> synthetic_shapes;
  std::function<SafetensorsWriter(const std::string& shape, int64_t grid, uint64_t seed)> synthetic;
  // The family's parts, loading their weights from `w` with cfg's shapes.
  std::function<std::unique_ptr<GptFamilyParts>(Context&, WeightStore&, const GptConfig&, const GptOptions&)> make;
  // The family's image head from the tensors `prefix` + the head's names ("" for the GPT's own;
  // "vertical." for FlashAR's vertical head), with cfg's shapes, for opt's rows per forward.
  std::function<std::unique_ptr<ImageHead>(Context&, WeightStore&, const GptConfig&, const GptOptions&,
                                           const std::string& prefix)>
      make_head;
};

class RegisterModelFamily {
 public:
  explicit RegisterModelFamily(ModelFamilyDescriptor d);
};

// Every registered family in listing order.
std::vector<const ModelFamilyDescriptor*> model_families();
// The family that claims `f`; throws Error naming the file and the families known when none does.
const ModelFamilyDescriptor& model_family_of(const SafetensorsFile& f);
// The family offering synthetic shape `name`, or nullptr.
const ModelFamilyDescriptor* family_with_synthetic_shape(const std::string& name);
// The configuration of a GPT file of any family (its family's reader), without loading it.
GptConfig gpt_config_of(const SafetensorsFile& f);

}  // namespace vkspec
