#pragma once
// The module's results as Python objects: images and grids as numpy arrays, counters and events as
// dicts, with the field names the CLI's JSON uses where it has one.
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "decoding/generation.h"
#include "decoding/strategy_registry.h"
#include "engine/image/image.h"

namespace vkspec::python {

namespace py = pybind11;

// uint8 [N, H, W, 3]; the images must share one size (they come from one decoder).
py::array_t<uint8_t> images_array(const std::vector<Image>& images);
// int32 [N, L]: each image's final grid in raster order.
py::array_t<int32_t> tokens_array(const std::vector<Generation>& gens);
// nfe, draft/head forwards, accepted length, ms: one image's totals.
py::dict generation_stats(const Generation& g);
// A step as the viewer draws it; grid is int32 [G, G], -1 where undecided.
py::dict step_dict(const StepEvent& e, int64_t grid_size);
// One registered method: name, summary, reference, lossless, options with ranges and defaults.
py::dict method_dict(const StrategyDescriptor& d);

}  // namespace vkspec::python
