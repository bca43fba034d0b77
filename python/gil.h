#pragma once
// The device works with the GIL released, so other Python threads run meanwhile; Ctrl-C is seen
// between decoding steps (check_signals), where stopping leaves nothing half-recorded: the
// strategy's step has been submitted and waited for.
#include <mutex>
#include <utility>

#include <pybind11/pybind11.h>

#include "python/session.h"

namespace vkspec::python {

namespace py = pybind11;

// Thrown by check_signals with the Python error (KeyboardInterrupt) left set on this thread.
struct PythonSignal {};

// Takes the GIL for a moment and runs Python's signal handlers; throws PythonSignal when one
// raised. Called between steps, with the GIL released.
inline void check_signals() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw PythonSignal{};
}

// fn() on the session's device with the GIL released and the session's lock held (taken after
// releasing the GIL, so a thread waiting for the lock never blocks one that wants the GIL).
template <class F>
auto on_device(Session& session, F&& fn) -> decltype(fn()) {
  try {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(session.mutex());
    return fn();
  } catch (const PythonSignal&) {
    throw py::error_already_set();
  }
}

}  // namespace vkspec::python
