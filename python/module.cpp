// The `vkspec` Python module's native part (`vkspec._native`): the functions python/vkspec/
// wraps. Keyword arguments arrive as the CLI's `--name value` lists (python/run_options.h), so the
// module and the command read options the same way.
#include <cstdio>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "cli/commands.h"
#include "common/error.h"
#include "engine/vk/instance.h"
#include "python/convert.h"
#include "python/generate.h"
#include "python/gil.h"

namespace py = pybind11;
using namespace vkspec;
using namespace vkspec::python;

namespace {

py::dict generate_call(Session& s, const std::string& method, const std::vector<std::string>& args,
                       const std::vector<uint64_t>& seeds, const std::vector<int64_t>& classes) {
  const RunOptions run = parse_run_options("generate", method, args);
  GenerateResult r = on_device(s, [&] { return generate(s, run, seeds, classes, check_signals); });
  py::dict out;
  out["method"] = method;
  out["options"] = run.options;
  out["sampler"] = r.sampler.str();
  out["images"] = images_array(r.images);
  out["tokens"] = tokens_array(r.generations);
  py::list stats;
  for (const Generation& g : r.generations) stats.append(generation_stats(g));
  out["stats"] = stats;
  return out;
}

std::vector<std::string> device_records() {
  std::vector<std::string> json;
  Instance instance;
  for (const DeviceCaps& d : instance.devices()) json.push_back(d.to_json());
  return json;
}

// `vkspec bench ARGS`, the command's own code; the caller adds --json FILE and reads it.
int run_bench(const std::vector<std::string>& args) {
  py::gil_scoped_release release;
  std::fflush(stdout);
  const int rc = cli::cmd_bench(args);
  std::fflush(stdout);
  return rc;
}

// Python frees a StepRun with the GIL held; its strategy's device objects go under the session's
// lock like any other device work (on_device), and the session outlives the lock it holds.
struct StepRunDeleter {
  void operator()(StepRun* run) const {
    const std::shared_ptr<Session> keep = run->shared_session();
    on_device(*keep, [&] { delete run; });
  }
};

py::object next_step(StepRun& run, Session& s) {
  if (run.done()) throw py::stop_iteration();
  StepRun::Step step = on_device(s, [&] { return run.next(); });
  py::dict d = step_dict(step.event, run.grid_size());
  if (step.image) d["image"] = images_array({*step.image})[py::int_(0)];
  return std::move(d);
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "vkspec's native part; use the vkspec package";
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  m.def("device_records", &device_records, "each device's capability record as JSON (vkspec devices --json)");
  m.def("methods", [] {
    py::list l;
    for (const StrategyDescriptor* d : strategy_registry()) l.append(method_dict(*d));
    return l;
  });
  m.def("run_bench", &run_bench, py::arg("args"));

  py::class_<Session, std::shared_ptr<Session>>(m, "Session")
      .def(py::init([](const std::vector<std::string>& model_args) {
             py::gil_scoped_release release;  // opening the device and loading the target take a while
             return std::make_shared<Session>(model_args);
           }),
           py::arg("model_args"))
      .def_property_readonly("model_args", &Session::model_args)
      .def_property_readonly("device", [](Session& s) { return s.context().caps().name; })
      .def_property_readonly("grid_size",
                             [](Session& s) { return on_device(s, [&] { return s.target_config().grid_size; }); })
      .def_property_readonly("num_classes",
                             [](Session& s) { return on_device(s, [&] { return s.target_config().num_classes; }); })
      .def("generate", &generate_call, py::arg("method"), py::arg("args"), py::arg("seeds"), py::arg("classes"))
      .def("validation_messages", &Session::take_validation_messages);

  py::class_<StepRun, std::unique_ptr<StepRun, StepRunDeleter>>(m, "StepRun")
      .def(py::init([](std::shared_ptr<Session> s, const std::string& method, const std::vector<std::string>& args,
                       uint64_t seed, int64_t cls, bool images) {
             const RunOptions run = parse_run_options("steps", method, args);
             return on_device(*s, [&] {
               return std::unique_ptr<StepRun, StepRunDeleter>(new StepRun(s, run, seed, cls, images));
             });
           }),
           py::arg("session"), py::arg("method"), py::arg("args"), py::arg("seed"), py::arg("cls"), py::arg("images"))
      .def("__iter__", [](StepRun& r) -> StepRun& { return r; })
      .def("__next__", [](StepRun& r) { return next_step(r, r.session()); });
}
