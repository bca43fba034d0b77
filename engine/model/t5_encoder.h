#pragma once
// The T5 v1.1 encoder (flan-t5-xl: 24 layers, d_model 2048, 32 heads of 64, gated-GELU FFN of
// 5120; t5-v1_1-xl and -xxl load the same way) on the engine: LlamaGen's text encoder, whose
// outputs its text-to-image GPTs take as caption embeddings (language/t5.py). As Hugging Face's
// T5EncoderModel computes it: T5's RMS LayerNorm before each sub-layer, self-attention without
// 1/sqrt(d) scaling plus the bucketed relative position bias of the first layer (shared by all)
// and the key padding mask, the gated-GELU FFN (gelu_tanh(wi_0 x) * wi_1 x, then wo), the final
// norm. tools/convert_t5.py writes the file (vkspec.kind t5_encoder).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/safetensors.h"
#include "engine/vk/context.h"

namespace vkspec {

struct T5Config {
  int64_t d_model = 0, n_layer = 0, n_head = 0, d_kv = 0, d_ff = 0, vocab = 0;
  int64_t num_buckets = 32, max_distance = 128;
  float eps = 1e-6f;
  int64_t inner() const { return n_head * d_kv; }
  // From tools/convert_t5.py's metadata; throws naming the file and key.
  static T5Config from_file(const SafetensorsFile& f);
};

// Hugging Face's bidirectional relative position bucket of key - query (T5Attention.
// _relative_position_bucket), with its float32 logarithm.
int64_t t5_relative_bucket(int64_t relative, int64_t num_buckets, int64_t max_distance);

class T5Encoder {
 public:
  // weights: the matrices' device dtype (f16 or f32); norms and the bias table stay f32.
  T5Encoder(Context& ctx, const std::string& path, DType weights = DType::F16);
  // From a file already open, or one built in memory (engine/model/synthetic_t5.h).
  T5Encoder(Context& ctx, SafetensorsFile file, DType weights = DType::F16);
  ~T5Encoder();
  T5Encoder(const T5Encoder&) = delete;
  T5Encoder& operator=(const T5Encoder&) = delete;

  const T5Config& config() const { return cfg_; }
  const std::string& path() const { return path_; }
  const SafetensorsFile& file() const { return *file_; }
  // Matrix weights one encode streams (q|k|v, o, wi, wo of every layer).
  int64_t matrix_params() const {
    return cfg_.n_layer * (4 * cfg_.inner() * cfg_.d_model + 3 * cfg_.d_ff * cfg_.d_model);
  }
  // The last hidden state [ids, d_model] (row-major) of every position, padded ones included, as
  // Hugging Face returns it; mask: 1 for a token, 0 for padding (hidden from every query's keys).
  // At most ops::kBiasedAttentionMaxTokens ids.
  std::vector<float> encode(const std::vector<int32_t>& ids, const std::vector<uint8_t>& mask);

 private:
  struct Layer;
  std::vector<float> position_bias(const std::vector<uint8_t>& mask) const;

  Context& ctx_;
  std::string path_;
  T5Config cfg_;
  std::vector<Layer> layers_;
  std::shared_ptr<const SafetensorsFile> file_;  // the token table, read on the host per prompt
  Tensor final_norm_;
  std::vector<float> bias_table_;  // [num_buckets, n_head]
};

}  // namespace vkspec
