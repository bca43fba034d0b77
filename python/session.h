#pragma once
// A Python session: one device and the models its calls have needed so far, opened once and
// reused by every call (loading is what costs on a small run). A call whose method needs more
// than is loaded (another model, a larger forward, another batch size) reloads the union, so
// alternating methods does not reload each time.
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/image/image.h"
#include "engine/vk/context.h"
#include "frontend/model_catalog.h"
#include "frontend/model_loading.h"

namespace vkspec::python {

class Session {
 public:
  // model_args: the model-file options as `vkspec generate` takes them (--model FILE, --vq FILE,
  // ...), read with the same table, so the same names and errors.
  explicit Session(const std::vector<std::string>& model_args);

  // The model-file options given, to hand on to commands that open their own (bench).
  const std::vector<std::string>& model_args() const { return model_args_; }
  const frontend::ModelCatalog& catalog() const { return catalog_; }
  Context& context() { return *ctx_; }
  const GptConfig& target_config();
  // The loaded models, holding at least what `runs` need at this batch size plus the tokenizer.
  const frontend::LoadedModels& models_for(const std::vector<frontend::MethodRun>& runs, int64_t batch);
  // Images of token grids at the decoder's size, grey repeated over three channels (as --npz).
  std::vector<Image> decode(const std::vector<const std::vector<int32_t>*>& grids);
  // Validation messages since the last call (VKSPEC_VALIDATION=1); the tests fail on any.
  std::vector<std::string> take_validation_messages();

  // Held by every call that uses the device: a Context is used by one thread at a time.
  std::mutex& mutex() { return mutex_; }
  // While a steps() iterator lives, its strategy points into the loaded models: models_for then
  // refuses to reload (an Error saying so) instead of pulling them from under it.
  void pin() { ++pins_; }
  void unpin() { --pins_; }

 private:
  std::vector<std::string> model_args_;
  frontend::ModelCatalog catalog_;
  std::unique_ptr<Context> ctx_;
  frontend::ModelRequest request_;  // what `loaded_` was loaded for
  std::optional<frontend::LoadedModels> loaded_;
  std::mutex mutex_;
  std::atomic<int> pins_{0};  // changed by iterators Python frees without the lock
};

}  // namespace vkspec::python
