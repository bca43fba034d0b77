// cli/sharded_images.h on the shipped 8x8 model over two workers on device 0: images come back in
// order with the tokens one worker alone gives, and when one worker fails mid-run (its target model
// was loaded too small for sjd's window) the images that finished are still handed over, the
// error names the failing device, and nothing hangs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "cli/sharded_images.h"
#include "frontend/model_catalog.h"

namespace vkspec::cli {
namespace {

std::shared_ptr<Instance> validated_instance() {
  InstanceOptions io = InstanceOptions::from_environment();
  io.validation = true;
  io.sync_validation = true;
  return std::make_shared<Instance>(io);
}

const frontend::ModelCatalog& catalog() {
  static const frontend::ModelCatalog c(frontend::ModelFiles{VKSPEC_ASSETS_DIR "/fmnist_gpt8.safetensors"});
  return c;
}

// Worker `small` (if any) gets a target that takes one query per forward: sjd's first window fails.
DevicePool::Setup models(const std::string& method, size_t small = SIZE_MAX) {
  return [method, small](Context& ctx, size_t worker) {
    auto w = std::make_unique<ModelWorker>();
    frontend::ModelRequest r = frontend::request_for(catalog(), {{method, {}}});
    if (worker == small) r.max_queries = 1;
    w->loaded = frontend::load_models(ctx, catalog(), r);
    w->models = w->loaded.set(ctx);
    return w;
  };
}

ShardedRun images(const std::string& method, uint64_t first, int n) {
  ShardedRun run;
  run.method = method;
  for (int i = 0; i < n; ++i) {
    StrategyInputs in;
    in.condition = std::make_shared<ClassLabel>(i % 10);
    in.seed = first + static_cast<uint64_t>(i);
    run.inputs.push_back(in);
  }
  return run;
}

std::vector<std::vector<int32_t>> tokens_on(DevicePool& pool, const ShardedRun& run) {
  std::vector<std::vector<int32_t>> out;
  generate_sharded(pool, run, [&](size_t k, ShardedImage&& im) {
    EXPECT_EQ(k, out.size());
    EXPECT_EQ(im.generation.seed, run.inputs[k].seed);
    EXPECT_GT(im.work.dispatches, 0u);
    out.push_back(std::move(im.generation.tokens));
  });
  return out;
}

TEST(ShardedImages, TwoWorkersGiveOneWorkersImagesInOrder) {
  const auto instance = validated_instance();
  const ShardedRun run = images("ar", 5, 4);
  std::vector<std::vector<int32_t>> one, two;
  {
    DevicePool pool(instance, {0}, ContextOptions::from_environment(), models("ar"));
    one = tokens_on(pool, run);
  }
  {
    DevicePool pool(instance, {0, 0}, ContextOptions::from_environment(), models("ar"));
    two = tokens_on(pool, run);
  }
  EXPECT_EQ(one, two);
  for (const std::string& m : instance->validation_log().take()) ADD_FAILURE() << m;
}

TEST(ShardedImages, AFailingWorkerKeepsWhatFinishedAndNamesItsDevice) {
  const auto instance = validated_instance();
  DevicePool pool(instance, {0, 0}, ContextOptions::from_environment(), models("sjd", 1));
  // Seeds 0, 2, 4 go to worker 0 and 1, 3 to worker 1; worker 1 starts only after image 0 is
  // done, so that image finishes whatever the threads' timing.
  std::atomic<bool> first_done{false};
  pool.submit<ModelWorker>(1, [&](Context&, ModelWorker&) {
    while (!first_done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  ShardedRun run = images("sjd", 0, 5);
  run.on_finished = [&](size_t k) {
    if (k == 0) first_done = true;
  };
  std::vector<size_t> taken;
  std::string error;
  try {
    generate_sharded(pool, run, [&](size_t k, ShardedImage&&) { taken.push_back(k); });
  } catch (const std::exception& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("device 0 ("), std::string::npos) << error;
  EXPECT_NE(error.find("worker 1"), std::string::npos) << error;
  ASSERT_FALSE(taken.empty());
  EXPECT_EQ(taken[0], 0u);
  for (size_t k : taken) EXPECT_EQ(k % 2, 0u) << "image " << k << " came from the failing worker";
  EXPECT_TRUE(pool.cancelled());
  for (const std::string& m : instance->validation_log().take()) ADD_FAILURE() << m;
}

}  // namespace
}  // namespace vkspec::cli
