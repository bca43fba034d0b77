// cli/device_pool.h: --devices parsing, and a pool of two workers on device 0 (two Contexts on one
// device, as `--devices 0,0` runs on lavapipe): each worker its own thread and Context, tasks in
// order with urgent ones first, a task's error naming its device and cancelling the others, a
// failed setup closing the pool, no validation message from two devices working at once, and a
// CPU device listed again on an instance of its own.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "cli/device_pool.h"

namespace vkspec::cli {
namespace {

std::shared_ptr<Instance> validated_instance() {
  InstanceOptions io = InstanceOptions::from_environment();
  io.validation = true;
  io.sync_validation = true;
  return std::make_shared<Instance>(io);
}

struct Counter : WorkerState {
  size_t worker = 0;
  std::thread::id thread;
  VkDevice device = VK_NULL_HANDLE;
  Instance* instance = nullptr;
  int tasks = 0;
};

DevicePool::Setup counters() {
  return [](Context& ctx, size_t worker) {
    auto s = std::make_unique<Counter>();
    s->worker = worker;
    s->thread = std::this_thread::get_id();
    s->device = ctx.device();
    s->instance = &ctx.instance();
    return s;
  };
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceList, ParsesIndicesAllAndTheDefault) {
  const auto instance = validated_instance();
  const uint32_t n = static_cast<uint32_t>(instance->devices().size());
  ASSERT_GE(n, 1u);
  EXPECT_EQ(device_list(std::nullopt, *instance), std::vector<uint32_t>{instance->preferred_device()});
  EXPECT_EQ(device_list(std::string("0"), *instance), std::vector<uint32_t>{0});
  EXPECT_EQ(device_list(std::string("0,0,0"), *instance), (std::vector<uint32_t>{0, 0, 0}));
  const std::vector<uint32_t> all = device_list(std::string("all"), *instance);
  EXPECT_FALSE(all.empty());
  for (uint32_t d : all) EXPECT_LT(d, n);
}

TEST(DeviceList, RefusesBadEntriesNamingThem) {
  const auto instance = validated_instance();
  const std::string n = std::to_string(instance->devices().size());
  for (const std::string& bad :
       std::vector<std::string>{"", "x", "-1", "0,", ",0", "0,,0", "1.5", "all,0", "9999999", n})
    EXPECT_NE(error_of([&] { device_list(bad, *instance); }).find("--devices"), std::string::npos) << bad;
  EXPECT_NE(error_of([&] { device_list(n, *instance); }).find("there is no device " + n), std::string::npos);
}

TEST(DevicePool, TwoContextsOnOneDeviceEachOnItsOwnThread) {
  const auto instance = validated_instance();
  {
    DevicePool pool(instance, {0, 0}, ContextOptions::from_environment(), counters());
    ASSERT_EQ(pool.size(), 2u);
    EXPECT_NE(pool.describe().find("2 devices: 0 "), std::string::npos) << pool.describe();
    EXPECT_EQ(pool.device_names(), pool.caps(0).name);
    std::set<std::thread::id> threads;
    std::set<VkDevice> devices;
    std::vector<std::future<float>> sums;
    for (size_t w = 0; w < 2; ++w) {
      auto f = pool.submit<Counter>(w, [w](Context&, Counter& c) {
        EXPECT_EQ(c.worker, w);
        EXPECT_EQ(c.thread, std::this_thread::get_id());
        return std::make_pair(c.thread, c.device);
      });
      const auto [thread, device] = f.get();
      threads.insert(thread);
      devices.insert(device);
      // A round trip through each device at once: no validation message with both in use.
      sums.push_back(pool.submit<Counter>(w, [](Context& ctx, Counter&) {
        std::vector<float> in(4096, 0.5f), out(4096);
        Tensor t = ctx.tensor(DType::F32, {4096}, "round trip");
        float sum = 0;
        for (int i = 0; i < 20; ++i) {
          ctx.upload(t, in.data(), in.size() * 4);
          ctx.download(t, out.data(), out.size() * 4);
          sum += out[17];
        }
        return sum;
      }));
    }
    for (auto& s : sums) EXPECT_FLOAT_EQ(s.get(), 10.0f);
    EXPECT_EQ(threads.size(), 2u);
    EXPECT_NE(threads.count(std::this_thread::get_id()), 1u);
    EXPECT_EQ(devices.size(), 2u);
  }
  for (const std::string& m : instance->validation_log().take()) ADD_FAILURE() << m;
}

// lavapipe dispatches one context at a time per instance (per driver screen): a CPU device listed
// again opens an instance of its own, with the same options and validation log; a GPU listed
// again shares the one instance.
TEST(DevicePool, ACpuDeviceListedAgainOpensItsOwnInstanceWithTheSameLog) {
  const auto instance = validated_instance();
  {
    DevicePool pool(instance, {0, 0}, ContextOptions::from_environment(), counters());
    Instance* first = pool.submit<Counter>(0, [](Context&, Counter& c) { return c.instance; }).get();
    Instance* second = pool.submit<Counter>(1, [](Context&, Counter& c) { return c.instance; }).get();
    EXPECT_EQ(first, instance.get());
    if (pool.caps(0).cpu_driver) {
      EXPECT_NE(second, instance.get());
      EXPECT_NE(second->handle(), instance->handle());
      EXPECT_EQ(second->shared_validation_log(), instance->shared_validation_log());
      EXPECT_EQ(second->validation(), instance->validation());
    } else {
      EXPECT_EQ(second, instance.get());
    }
  }
  for (const std::string& m : instance->validation_log().take()) ADD_FAILURE() << m;
}

TEST(DevicePool, UrgentTasksRunBeforeQueuedOnes) {
  DevicePool pool(validated_instance(), {0}, ContextOptions::from_environment(), counters());
  std::atomic<bool> release{false};
  std::vector<int> order;  // only worker 0's thread writes it
  auto blocker = pool.submit<Counter>(0, [&](Context&, Counter&) {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  auto queued = pool.submit<Counter>(0, [&](Context&, Counter&) { order.push_back(1); });
  auto urgent = pool.submit<Counter>(
      0, [&](Context&, Counter&) { order.push_back(2); }, true);
  release = true;
  blocker.get();
  queued.get();
  urgent.get();
  EXPECT_EQ(order, (std::vector<int>{2, 1}));
}

TEST(DevicePool, AFailingTaskNamesItsDeviceAndCancelsTheOthers) {
  DevicePool pool(validated_instance(), {0, 0}, ContextOptions::from_environment(), counters());
  auto failing = pool.submit<Counter>(1, [](Context&, Counter&) -> int { throw Error("out of luck"); });
  const std::string message = error_of([&] { failing.get(); });
  EXPECT_NE(message.find("device 0 ("), std::string::npos) << message;
  EXPECT_NE(message.find("worker 1"), std::string::npos) << message;
  EXPECT_NE(message.find("out of luck"), std::string::npos) << message;
  EXPECT_TRUE(pool.cancelled());
  auto later = pool.submit<Counter>(0, [&pool](Context&, Counter&) { pool.throw_if_cancelled(); });
  EXPECT_THROW(later.get(), Cancelled);
}

TEST(DevicePool, OneWorkerKeepsTheErrorAsItIs) {
  DevicePool pool(validated_instance(), {0}, ContextOptions::from_environment(), counters());
  auto failing = pool.submit<Counter>(0, [](Context&, Counter&) -> int { throw OutOfDeviceMemory("too big"); });
  EXPECT_THROW(failing.get(), OutOfDeviceMemory);
}

TEST(DevicePool, AFailedSetupClosesThePoolAndNamesTheDevice) {
  const std::string message = error_of([] {
    DevicePool pool(validated_instance(), {0, 0}, ContextOptions::from_environment(),
                    [](Context&, size_t worker) -> std::unique_ptr<WorkerState> {
                      if (worker == 1) throw Error("no model here");
                      return std::make_unique<Counter>();
                    });
  });
  EXPECT_NE(message.find("device 0 ("), std::string::npos) << message;
  EXPECT_NE(message.find("no model here"), std::string::npos) << message;
}

TEST(DevicePool, ClosesWithTasksStillQueued) {
  std::atomic<int> ran{0};
  {
    DevicePool pool(validated_instance(), {0, 0}, ContextOptions::from_environment(), counters());
    for (int i = 0; i < 100; ++i)
      pool.submit<Counter>(static_cast<size_t>(i % 2), [&](Context&, Counter&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        ++ran;
      });
  }  // must return after at most the running tasks, not all 100
  EXPECT_LT(ran.load(), 100);
}

}  // namespace
}  // namespace vkspec::cli
