#pragma once
// The check every model made for one base GPT (draft heads, latent heads) runs at load: its
// file's base_family (absent: llamagen), dim, vocab_size and grid_size metadata must be the base
// model's.
#include <string>

#include "engine/model/gpt.h"
#include "engine/model/safetensors.h"

namespace vkspec {

// The family check alone (base_family, absent: llamagen), for models that check their sizes
// themselves (the EAGLE drafter).
void require_base_family(const SafetensorsFile& f, const std::string& path, const std::string& what, const Gpt& base);

// Throws naming the file, the base and what differs.
void require_fits_base(const SafetensorsFile& f, const std::string& path, const std::string& what, const Gpt& base);

}  // namespace vkspec
