#include "python/convert.h"

#include <cstring>

#include "common/error.h"

namespace vkspec::python {
namespace {

py::list int_list(const std::vector<int32_t>& v) {
  py::list l;
  for (int32_t x : v) l.append(x);
  return l;
}

py::list groups_list(const std::vector<std::vector<int32_t>>& groups) {
  py::list l;
  for (const auto& g : groups) l.append(int_list(g));
  return l;
}

py::dict option_dict(const OptionSpec& o) {
  py::dict d;
  d["name"] = o.name;
  d["type"] = o.type == OptionSpec::Type::Integer  ? "integer"
              : o.type == OptionSpec::Type::Number ? "number"
                                                   : "choice";
  d["default"] = o.fallback;  // text, as the registry keeps it: some defaults depend on the model
  if (o.type == OptionSpec::Type::Choice) {
    d["choices"] = o.choices;
  } else {
    d["min"] = o.lo;
    d["max"] = o.hi;
  }
  d["accepts"] = o.accepted();
  d["help"] = o.help;
  return d;
}

}  // namespace

py::array_t<uint8_t> images_array(const std::vector<Image>& images) {
  const py::ssize_t n = static_cast<py::ssize_t>(images.size());
  const py::ssize_t h = n ? images[0].height : 0, w = n ? images[0].width : 0;
  py::array_t<uint8_t> a({n, h, w, py::ssize_t{3}});
  uint8_t* out = a.mutable_data();
  for (const Image& im : images) {
    if (im.height != h || im.width != w || im.channels != 3)
      throw Error("images of different sizes or channels cannot share one array");
    std::memcpy(out, im.pixels.data(), im.pixels.size());
    out += im.pixels.size();
  }
  return a;
}

py::array_t<int32_t> tokens_array(const std::vector<Generation>& gens) {
  const py::ssize_t n = static_cast<py::ssize_t>(gens.size());
  const py::ssize_t l = n ? static_cast<py::ssize_t>(gens[0].tokens.size()) : 0;
  py::array_t<int32_t> a({n, l});
  int32_t* out = a.mutable_data();
  for (const Generation& g : gens) out = std::copy(g.tokens.begin(), g.tokens.end(), out);
  return a;
}

py::dict generation_stats(const Generation& g) {
  py::dict d;
  d["seed"] = g.seed;
  d["class"] = g.class_id;
  d["nfe"] = g.nfe;
  d["draft_forwards"] = g.draft_forwards;
  d["head_forwards"] = g.head_forwards;
  d["accepted_length"] = g.accepted_length();
  d["islands"] = g.islands;
  d["wall_ms"] = g.wall_ms;
  d["device_ms"] = g.device_ms;
  d["batch"] = g.batch;
  return d;
}

py::dict step_dict(const StepEvent& e, int64_t grid_size) {
  py::dict d;
  d["step"] = e.step;
  d["proposed"] = int_list(e.proposed);
  d["proposed_tokens"] = int_list(e.proposed_tokens);
  d["accepted"] = int_list(e.accepted);
  d["rejected"] = int_list(e.rejected);
  d["resampled"] = int_list(e.resampled);
  d["islands"] = groups_list(e.islands);
  d["groups"] = groups_list(e.groups);
  py::array_t<int32_t> grid({static_cast<py::ssize_t>(grid_size), static_cast<py::ssize_t>(grid_size)});
  std::copy(e.grid.begin(), e.grid.end(), grid.mutable_data());
  d["grid"] = grid;
  d["committed"] = e.committed;
  d["nfe"] = e.nfe;
  d["draft_forwards"] = e.draft_forwards;
  d["head_forwards"] = e.head_forwards;
  d["wall_ms"] = e.wall_ms;
  d["device_ms"] = e.device_ms;
  d["done"] = e.done;
  return d;
}

py::dict method_dict(const StrategyDescriptor& d) {
  py::dict m;
  m["name"] = d.name;
  m["summary"] = d.summary;
  m["reference"] = d.reference;
  m["lossless"] = d.lossless_for({});
  m["losslessness"] = d.losslessness();  // as `vkspec methods` says it (lossless with which rule)
  m["reference_method"] = d.reference_method;
  m["batches"] = static_cast<bool>(d.make_batch);  // decodes several images per forward (batch=)
  py::list options;
  for (const OptionSpec& o : d.options) options.append(option_dict(o));
  m["options"] = options;
  return m;
}

}  // namespace vkspec::python
