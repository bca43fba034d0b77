#include "frontend/model_catalog.h"

#include <cstdlib>
#include <sys/stat.h>

#include "common/env.h"
#include "common/error.h"

namespace vkspec::frontend {
namespace {

struct RoleAsset {
  const char* option;   // what replaces the shipped file
  const char* shipped;  // file name under asset_dir()
};

RoleAsset asset_of(ModelRole role) {
  switch (role) {
    case ModelRole::Target: return {"--model", "fmnist_gpt16.safetensors"};
    case ModelRole::Drafter: return {"--drafter", "fmnist_drafter16.safetensors"};
    case ModelRole::LowRes: return {"--low-res", "fmnist_gpt8.safetensors"};
    case ModelRole::Heads: return {"--heads", "fmnist_gpt16_heads.safetensors"};
    case ModelRole::LatentHeads: return {"--latent-heads", "fmnist_gpt16_latent_heads.safetensors"};
    case ModelRole::Eagle: return {"--eagle-drafter", "fmnist_eagle_drafter16.safetensors"};
    // MuLo-SD's trained upsamplers for the shipped r = 2 pair (fmnist_gpt8 -> fmnist_gpt16); the
    // r = 4 ones (fmnist_sr4, fmnist_latent_up4, with fmnist_gpt4) are given by file
    case ModelRole::SrNet: return {"--sr-net", "fmnist_sr2.safetensors"};
    case ModelRole::LatentUpsampler: return {"--latent-upsampler", "fmnist_latent_up2.safetensors"};
    case ModelRole::Tokenizer: return {"--vq", "fmnist_vq.safetensors"};
    case ModelRole::Classifier: return {"--classifier", "fmnist_classifier.safetensors"};
  }
  throw Error("unknown model role");
}

bool file_exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
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
          {"--latent-upsampler", "FILE", "MuLo-SD's latent upsampler (mulo --upsampler latent)"}};
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
    case ModelRole::Tokenizer: return given_.tokenizer;
    case ModelRole::Classifier: return given_.classifier;
  }
  throw Error("unknown model role");
}

std::string ModelCatalog::path(ModelRole role) const {
  if (!given(role).empty()) return given(role);
  const RoleAsset a = asset_of(role);
  const std::string shipped = asset_dir() + "/" + a.shipped;
  if (!file_exists(shipped))
    throw Error("shipped model " + shipped + " not found (set VKSPEC_ASSETS, or pass " + a.option + " FILE)");
  return shipped;
}

std::string ModelCatalog::companion(ModelRole role) const {
  if (!given(role).empty()) return given(role);
  if (!given(ModelRole::Target).empty()) return "";
  const std::string shipped = asset_dir() + "/" + asset_of(role).shipped;
  return file_exists(shipped) ? shipped : "";
}

}  // namespace vkspec::frontend
