#pragma once
// The check every model made for one base GPT (draft heads, latent heads) runs at load: its
// file's dim, vocab_size and grid_size metadata must be the base model's.
#include <string>

#include "engine/model/gpt.h"
#include "engine/model/safetensors.h"

namespace vkspec {

// Throws "path: <what> for dim .., vocab .., grid .. do not fit the base model .." on a mismatch.
void require_fits_base(const SafetensorsFile& f, const std::string& path, const std::string& what, const Gpt& base);

}  // namespace vkspec
