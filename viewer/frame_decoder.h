#pragma once
// Turns a (partly) committed token grid into pixels after every step: the tokenizer on the GPU, or
// a colour per token id when no tokenizer fits (replaying a trace from another model).
#include <memory>
#include <string>
#include <vector>

#include "engine/model/tokenizer.h"
#include "viewer/run_record.h"

namespace vkspec::viewer {

class FrameDecoder {
 public:
  virtual ~FrameDecoder() = default;
  // grid: grid_size^2 token ids, kUndecided where nothing is committed yet.
  virtual DecodedImage decode(const std::vector<int32_t>& grid) = 0;
  virtual std::string description() const = 0;
};

// Owns its command stream: it runs on the decode thread while the UI records its own frames.
class TokenizerFrameDecoder : public FrameDecoder {
 public:
  TokenizerFrameDecoder(Context& ctx, Tokenizer& tokenizer, int64_t grid_size);
  DecodedImage decode(const std::vector<int32_t>& grid) override;
  std::string description() const override;

 private:
  Context& ctx_;
  Tokenizer& tokenizer_;
  int64_t grid_;
  CommandStream stream_;
  Tensor ids_, pixels_;
  std::vector<float> host_;
};

class PaletteFrameDecoder : public FrameDecoder {
 public:
  explicit PaletteFrameDecoder(int64_t grid_size) : grid_(grid_size) {}
  DecodedImage decode(const std::vector<int32_t>& grid) override;
  std::string description() const override { return "token ids as colours (no VQ decoder)"; }

 private:
  int64_t grid_;
};

}  // namespace vkspec::viewer
