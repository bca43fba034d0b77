#include "engine/model/base_fit.h"

#include "common/error.h"

namespace vkspec {

void require_fits_base(const SafetensorsFile& f, const std::string& path, const std::string& what, const Gpt& base) {
  const GptConfig& cfg = base.config();
  try {  // these models read the base's output matrix and its 2D positions: LlamaGen's
    base.output_weight();
  } catch (const Error& e) {
    throw Error(path + ": " + what + " built on LlamaGen's output head cannot run on " + base.path() + ": " + e.what());
  }
  const int64_t dim = f.meta_int("dim");
  if (dim != cfg.dim || f.meta_int("vocab_size") != cfg.vocab_size || f.meta_int("grid_size") != cfg.grid_size)
    throw Error(path + ": " + what + " for dim " + std::to_string(dim) + ", vocab " + f.meta("vocab_size") + ", grid " +
                f.meta("grid_size") + " do not fit the base model " + base.path() + " (dim " + std::to_string(cfg.dim) +
                ", vocab " + std::to_string(cfg.vocab_size) + ", grid " + std::to_string(cfg.grid_size) + ")");
}

}  // namespace vkspec
