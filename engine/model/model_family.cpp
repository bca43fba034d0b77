#include "engine/model/model_family.h"

#include <algorithm>
#include <map>

#include "common/error.h"

namespace vkspec {
namespace {

std::map<std::string, ModelFamilyDescriptor>& registry() {
  static std::map<std::string, ModelFamilyDescriptor> r;
  return r;
}

}  // namespace

RegisterModelFamily::RegisterModelFamily(ModelFamilyDescriptor d) {
  const std::string name = d.name;
  if (!d.make || !d.make_head) throw Error("model family '" + name + "' registered without its parts or its head");
  if (!registry().emplace(name, std::move(d)).second) throw Error("model family '" + name + "' registered twice");
}

std::vector<const ModelFamilyDescriptor*> model_families() {
  std::vector<const ModelFamilyDescriptor*> out;
  for (const auto& [name, d] : registry()) out.push_back(&d);
  std::sort(out.begin(), out.end(), [](const auto* a, const auto* b) { return a->order < b->order; });
  return out;
}

const ModelFamilyDescriptor& model_family_of(const SafetensorsFile& f) {
  if (f.has_meta("vkspec.kind") && f.meta("vkspec.kind") != "gpt")
    throw Error(f.path() + ": is a '" + f.meta("vkspec.kind") + "' model, not a GPT");
  std::string known;
  for (const ModelFamilyDescriptor* d : model_families()) {
    if (d->claims(f)) return *d;
    known += (known.empty() ? "" : ", ") + d->name;
  }
  const std::string family = f.has_meta("vkspec.family") ? " '" + f.meta("vkspec.family") + "'" : "";
  throw Error(f.path() + ": a GPT of no family this build knows" + family + " (known: " + known +
              "; metadata vkspec.family and model_type say which)");
}

const ModelFamilyDescriptor* family_with_synthetic_shape(const std::string& name) {
  for (const ModelFamilyDescriptor* d : model_families())
    if (std::find(d->synthetic_shapes.begin(), d->synthetic_shapes.end(), name) != d->synthetic_shapes.end()) return d;
  return nullptr;
}

GptConfig gpt_config_of(const SafetensorsFile& f) { return model_family_of(f).config(f); }

}  // namespace vkspec
