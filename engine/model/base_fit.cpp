#include "engine/model/base_fit.h"

#include "common/error.h"

namespace vkspec {

void require_base_family(const SafetensorsFile& f, const std::string& path, const std::string& what, const Gpt& base) {
  // Heads and drafters read the base's hidden states, which mean something else in another family
  // even at the same width. Files without base_family were all trained on LlamaGen models.
  const GptConfig& cfg = base.config();
  const std::string trained_on = f.has_meta("base_family") ? f.meta("base_family") : "llamagen";
  const std::string family = cfg.family.rfind("llamagen", 0) == 0 ? "llamagen" : cfg.family;
  if (trained_on != family)
    throw Error(path + ": " + what + " trained on a " + trained_on + " model cannot run on " + base.path() + " (" +
                cfg.family +
                "): heads and drafters are trained for the model they draft for; pass one trained on it "
                "(--heads, --latent-heads, --eagle-drafter)");
}

void require_fits_base(const SafetensorsFile& f, const std::string& path, const std::string& what, const Gpt& base) {
  require_base_family(f, path, what, base);
  const GptConfig& cfg = base.config();
  const int64_t dim = f.meta_int("dim");
  if (dim != cfg.dim || f.meta_int("vocab_size") != cfg.vocab_size || f.meta_int("grid_size") != cfg.grid_size)
    throw Error(path + ": " + what + " for dim " + std::to_string(dim) + ", vocab " + f.meta("vocab_size") + ", grid " +
                f.meta("grid_size") + " do not fit the base model " + base.path() + " (dim " + std::to_string(cfg.dim) +
                ", vocab " + std::to_string(cfg.vocab_size) + ", grid " + std::to_string(cfg.grid_size) + ")");
}

}  // namespace vkspec
