#include "frontend/model_catalog.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <utility>
#include <vector>
#include <sys/stat.h>

#include "common/env.h"
#include "common/error.h"

namespace vkspec::frontend {
namespace {

// What replaces a role's shipped file.
const char* option_of(ModelRole role) {
  switch (role) {
    case ModelRole::Target: return "--model";
    case ModelRole::Drafter: return "--drafter";
    case ModelRole::LowRes: return "--low-res";
    case ModelRole::Heads: return "--heads";
    case ModelRole::LatentHeads: return "--latent-heads";
    case ModelRole::Eagle: return "--eagle-drafter";
    case ModelRole::SrNet: return "--sr-net";
    case ModelRole::LatentUpsampler: return "--latent-upsampler";
    case ModelRole::FlashAr: return "--flashar";
    case ModelRole::Tokenizer: return "--vq";
    case ModelRole::Classifier: return "--classifier";
  }
  throw Error("unknown model role");
}

// A shipped target and the files trained for it (under asset_dir()); a role it lacks has no
// shipped file for that target.
struct ShippedSet {
  const char* target;
  std::vector<std::pair<ModelRole, const char*>> files;
};

// The first is the default target's (no --model, no prompt).
const std::vector<ShippedSet>& shipped_sets() {
  static const std::vector<ShippedSet> sets = {
      {"fmnist_gpt16.safetensors",
       {{ModelRole::Drafter, "fmnist_drafter16.safetensors"},
        {ModelRole::LowRes, "fmnist_gpt8.safetensors"},
        {ModelRole::Heads, "fmnist_gpt16_heads.safetensors"},
        {ModelRole::LatentHeads, "fmnist_gpt16_latent_heads.safetensors"},
        {ModelRole::Eagle, "fmnist_eagle_drafter16.safetensors"},
        // MuLo-SD's trained upsamplers for the shipped r = 2 pair (fmnist_gpt8 -> fmnist_gpt16);
        // the r = 4 ones (fmnist_sr4, fmnist_latent_up4, with fmnist_gpt4) are given by file
        {ModelRole::SrNet, "fmnist_sr2.safetensors"},
        {ModelRole::LatentUpsampler, "fmnist_latent_up2.safetensors"},
        {ModelRole::FlashAr, "fmnist_flashar16.safetensors"},
        {ModelRole::Tokenizer, "fmnist_vq.safetensors"},
        {ModelRole::Classifier, "fmnist_classifier.safetensors"}}},
      // The prompt-driven model (its VQ decoder is also named in its own metadata).
      {"fmnist_janus.safetensors",
       {{ModelRole::Heads, "fmnist_janus_heads.safetensors"},
        {ModelRole::FlashAr, "fmnist_janus_flashar.safetensors"},
        {ModelRole::Tokenizer, "fmnist_vq.safetensors"},
        {ModelRole::Classifier, "fmnist_classifier.safetensors"}}},
  };
  return sets;
}

const char* shipped_file(const ShippedSet& set, ModelRole role) {
  if (role == ModelRole::Target) return set.target;
  for (const auto& [r, file] : set.files)
    if (r == role) return file;
  return nullptr;
}

bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return a == b || std::filesystem::equivalent(a, b, ec);
}

}  // namespace

ModelFiles model_files(const ArgParser& ap, bool prompted) {
  ModelFiles f;
  f.target = ap.get_or("--model", "");
  // The shipped prompt-driven model (a tiny Janus-Pro trained on Fashion-MNIST captions) when a
  // prompt comes without a model: as given, so LlamaGen's shipped companions never pair with it.
  if (prompted && f.target.empty()) f.target = asset_dir() + "/fmnist_janus.safetensors";
  f.drafter = ap.get_or("--drafter", "");
  if (f.drafter == "jacobi" || f.drafter == "model" || f.drafter == "eagle") f.drafter.clear();
  f.low_res = ap.get_or("--low-res", "");
  f.heads = ap.get_or("--heads", "");
  f.latent_heads = ap.get_or("--latent-heads", "");
  f.eagle = ap.get_or("--eagle-drafter", "");
  f.sr_net = ap.get_or("--sr-net", "");
  f.latent_upsampler = ap.get_or("--latent-upsampler", "");
  f.flashar = ap.get_or("--flashar", "");
  f.tokenizer = ap.get_or("--vq", "");
  f.classifier = ap.get_or("--classifier", "");
  return f;
}

OptionTable model_file_option_table() {
  return {{"--model", "FILE", "the target GPT (default: the shipped fmnist_gpt16; with a prompt, fmnist_janus)"},
          {"--vq", "FILE", "the tokenizer that turns tokens into pixels (default: the shipped fmnist_vq)"},
          {"--drafter", "jacobi|model|eagle|FILE", "who drafts for methods with a drafter; FILE: that drafter model"},
          {"--low-res", "FILE", "the low-resolution model MuLo-SD drafts with"},
          {"--heads", "FILE", "token draft heads (hawk, ssd-coupled, ssd --head-kind token, --init heads)"},
          {"--latent-heads", "FILE", "SSD's latent heads (ssd)"},
          {"--eagle-drafter", "FILE", "the EAGLE-style feature drafter (eagle, lantern --drafter eagle, lantern++)"},
          {"--sr-net", "FILE", "MuLo-SD's pixel super-resolution net (mulo --upsampler pixel-sr)"},
          {"--latent-upsampler", "FILE", "MuLo-SD's latent upsampler (mulo --upsampler latent)"},
          {"--flashar", "FILE", "FlashAR's post-trained model: backbone, vertical branch and gate (flashar)"}};
}

std::vector<std::string> model_file_options() { return option_names(model_file_option_table()); }

OptionDoc classifier_option() {
  return {"--classifier", "FILE|none", "the classifier that judges images (class accuracy, FID); none: no judging"};
}

std::string asset_dir() {
  if (auto a = env::text(env::kAssets)) return *a;
  return VKSPEC_DEFAULT_ASSETS;
}

const std::string& ModelCatalog::given(ModelRole role) const {
  switch (role) {
    case ModelRole::Target: return given_.target;
    case ModelRole::Drafter: return given_.drafter;
    case ModelRole::LowRes: return given_.low_res;
    case ModelRole::Heads: return given_.heads;
    case ModelRole::LatentHeads: return given_.latent_heads;
    case ModelRole::Eagle: return given_.eagle;
    case ModelRole::SrNet: return given_.sr_net;
    case ModelRole::LatentUpsampler: return given_.latent_upsampler;
    case ModelRole::FlashAr: return given_.flashar;
    case ModelRole::Tokenizer: return given_.tokenizer;
    case ModelRole::Classifier: return given_.classifier;
  }
  throw Error("unknown model role");
}

int ModelCatalog::shipped_set() const {
  const std::string& target = given_.target;
  if (target.empty()) return 0;
  const std::vector<ShippedSet>& sets = shipped_sets();
  for (size_t i = 0; i < sets.size(); ++i)
    if (same_file(target, asset_dir() + "/" + sets[i].target)) return static_cast<int>(i);
  return -1;
}

std::string ModelCatalog::path(ModelRole role) const {
  if (!given(role).empty()) return given(role);
  // A target of the user's own still finds the shipped tokenizer, classifier and the rest (a file
  // that does not fit it is refused when it loads).
  const int set = shipped_set();
  const ShippedSet& from = shipped_sets()[static_cast<size_t>(std::max(set, 0))];
  const char* file = shipped_file(from, role);
  if (!file)
    throw Error(std::string("nothing shipped for ") + from.target + " takes the role of " + option_of(role) +
                " (pass " + option_of(role) + " FILE)");
  const std::string shipped = asset_dir() + "/" + file;
  if (!file_exists(shipped))
    throw Error("shipped model " + shipped + " not found (set VKSPEC_ASSETS, or pass " + option_of(role) + " FILE)");
  return shipped;
}

// Shipped companions are trained for their shipped target only.
std::string ModelCatalog::companion(ModelRole role) const {
  if (!given(role).empty()) return given(role);
  const int set = shipped_set();
  const char* file = set >= 0 ? shipped_file(shipped_sets()[static_cast<size_t>(set)], role) : nullptr;
  if (!file) return "";
  const std::string shipped = asset_dir() + "/" + file;
  return file_exists(shipped) ? shipped : "";
}

}  // namespace vkspec::frontend
