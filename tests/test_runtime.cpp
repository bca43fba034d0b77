// The Vulkan runtime: allocator, pipelines and reflection, command streams and barriers,
// validation plumbing, device choice.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/checks/op_check.h"
#include "engine/ops/elementwise.h"
#include "engine/vk/command_stream.h"
#include "engine/vk/coopmat_khr.h"
#include "engine/vk/shader_registry.h"
#include "common/error.h"
#include "shaders/shader_ids.h"
#include "tests/support/vulkan_test.h"

namespace vkspec {
namespace {

using testing::VulkanTest;

TEST(HalfFloat, RoundTripsAndRoundsToNearestEven) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f})
    EXPECT_EQ(half_to_float(float_to_half(f)), f) << f;
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), float_to_half(1.0f));  // tie -> even mantissa
  EXPECT_EQ(float_to_half(70000.0f), 0x7c00);                         // overflow -> inf
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
}

TEST(ShapeTest, NumelRowsAndReshape) {
  TensorView v;
  v.shape = {4, 3};
  v.bytes = 48;
  v.offset = 16;
  TensorView r = v.rows(1, 2);
  EXPECT_EQ(r.offset, 16u + 12u);
  EXPECT_EQ(r.bytes, 24u);
  EXPECT_EQ(r.shape, Shape({2, 3}));
  EXPECT_THROW(v.rows(3, 2), Error);
  EXPECT_THROW(v.reshape({5, 2}), Error);
  EXPECT_EQ(v.reshape({12}).shape.numel(), 12);
}

TEST_F(VulkanTest, DevicesAreListedWithSubgroupFacts) {
  const DeviceCaps& c = ctx().caps();
  EXPECT_FALSE(c.name.empty());
  EXPECT_GE(c.subgroup_size, 1u);
  EXPECT_EQ(c.subgroup_size & (c.subgroup_size - 1), 0u) << "subgroup size is a power of two";
  EXPECT_GT(c.max_storage_buffer_range, 0u);
  EXPECT_FALSE(c.heaps.empty());
  EXPECT_NE(c.to_json().find("\"subgroup\""), std::string::npos);
}

TEST_F(VulkanTest, AllocatorReusesFreedRangesAndCoalesces) {
  Allocator& a = ctx().allocator();
  const AllocatorStats before = a.stats();
  VkDeviceSize first_offset;
  VkBuffer first_buffer;
  {
    Buffer x = a.allocate(1000, MemoryUsage::Device, "x");
    Buffer y = a.allocate(1000, MemoryUsage::Device, "y");
    EXPECT_NE(x.offset(), y.offset());
    EXPECT_EQ(x.offset() % ctx().caps().min_storage_buffer_offset_alignment, 0u);
    first_offset = x.offset();
    first_buffer = x.handle();
    EXPECT_EQ(a.stats().live_buffers, before.live_buffers + 2);
  }
  EXPECT_EQ(a.stats().live_buffers, before.live_buffers);
  EXPECT_EQ(a.stats().device_bytes_in_use, before.device_bytes_in_use);
  // After both are freed, the coalesced hole takes an allocation of twice the size at the same place.
  Buffer z = a.allocate(2000, MemoryUsage::Device, "z");
  EXPECT_EQ(z.handle(), first_buffer);
  EXPECT_EQ(z.offset(), first_offset);
}

TEST_F(VulkanTest, BigAllocationsGetDedicatedBlocksReleasedOnFree) {
  Allocator& a = ctx().allocator();
  const uint32_t blocks = a.stats().blocks;
  {
    Buffer big = a.allocate(48ull << 20, MemoryUsage::Device, "big");
    EXPECT_EQ(a.stats().blocks, blocks + 1);
  }
  EXPECT_EQ(a.stats().blocks, blocks);
}

TEST_F(VulkanTest, DeviceMemoryCapGivesOutOfDeviceMemory) {
  auto instance = std::make_shared<Instance>(InstanceOptions{true, false});
  ContextOptions o = ContextOptions::from_environment();
  o.device_memory_cap = 80ull << 20;
  Context capped(instance, ctx().caps().index, o);
  Tensor ok = capped.tensor(DType::F32, {1 << 20}, "fits");
  try {
    Tensor too_big = capped.tensor(DType::F32, {100 << 20}, "kv cache");
    FAIL() << "expected OutOfDeviceMemory";
  } catch (const OutOfDeviceMemory& e) {
    EXPECT_NE(std::string(e.what()).find("kv cache"), std::string::npos) << e.what();
  }
  EXPECT_EQ(instance->validation_log().count(), 0u);
}

TEST_F(VulkanTest, UploadDownloadWholeAndSubranges) {
  std::vector<float> data = random_floats(1000, 7);
  Tensor t = upload_floats(ctx(), data, DType::F32, {1000}, "t");
  EXPECT_EQ(download_floats(ctx(), t), data);
  float part[3] = {1, 2, 3};
  ctx().upload(t, 40, part, sizeof(part));
  float back[3];
  ctx().download(t, 40, back, sizeof(back));
  EXPECT_EQ(back[0], 1);
  EXPECT_EQ(back[2], 3);
  EXPECT_THROW(ctx().upload(t, data.data(), 12), Error);
  EXPECT_THROW(ctx().download(t, 3999, back, 8), Error);
}

TEST_F(VulkanTest, ReflectionReadsBindingsPushConstantsAndWorkgroupSize) {
  const Pipeline& p = ctx().pipeline(shaders::add, {64});
  ASSERT_EQ(p.bindings().size(), 3u);
  EXPECT_TRUE(p.bindings()[0].reads);
  EXPECT_FALSE(p.bindings()[0].writes);
  EXPECT_FALSE(p.bindings()[2].reads);
  EXPECT_TRUE(p.bindings()[2].writes);
  EXPECT_EQ(p.push_constant_size(), 4u);
  EXPECT_EQ(p.local_size(0), 64u);
  EXPECT_EQ(&ctx().pipeline(shaders::add, {64}), &p) << "pipelines are cached per (shader, spec)";
  EXPECT_NE(&ctx().pipeline(shaders::add, {32}), &p);
  EXPECT_EQ(ctx().pipeline(shaders::add, {32}).local_size(0), 32u);
}

// Shaders with subgroup operations get full subgroups where the device can promise them and the
// workgroup width allows; shaders without never ask.
TEST_F(VulkanTest, SubgroupShadersRequireFullSubgroups) {
  const DeviceCaps& c = ctx().caps();
  const uint32_t sg = std::max(c.subgroup_size, 1u);
  EXPECT_FALSE(ctx().pipeline(shaders::add, {sg * 4}).full_subgroups());
  EXPECT_EQ(ctx().pipeline(shaders::rms_norm, {sg * 4}).full_subgroups(), c.subgroup_size_control);
  if (c.shader_int64) {  // matmul_bcast loads 64-bit words
    EXPECT_EQ(ctx().pipeline(shaders::matmul_bcast, {sg}).full_subgroups(), c.subgroup_size_control);
  }
  if (sg > 1) {
    EXPECT_FALSE(ctx().pipeline(shaders::rms_norm, {sg + 1}).full_subgroups());
  }
}

TEST(ShaderIds, IndexTheRegistryByName) {
  ASSERT_GT(embedded_shader_count(), 0u);
  for (uint32_t i = 0; i < embedded_shader_count(); ++i) {
    EXPECT_EQ(&embedded_shader(ShaderId{i}), &embedded_shaders()[i]);
    EXPECT_EQ(find_embedded_shader(embedded_shaders()[i].name), &embedded_shaders()[i]);
  }
  EXPECT_EQ(embedded_shaders()[embedded_shader_count()].name, nullptr);
  EXPECT_STREQ(embedded_shader(shaders::matmul_gemv).name, "matmul_gemv");
  EXPECT_STREQ(embedded_shader(shaders::upsample_nearest_2x).name, "upsample_nearest_2x");
}

TEST_F(VulkanTest, BadSpecConstantsAreErrorsAndNotCached) {
  EXPECT_THROW(ctx().pipeline(shaders::add, {64, 1}), Error);
  EXPECT_THROW(ctx().pipeline(shaders::add, {64, 1}), Error);
}

// The viewer records from its decode thread while its UI thread may build pipelines too.
TEST_F(VulkanTest, ConcurrentRequestsBuildEachVariantOnce) {
  const uint32_t sizes[] = {8, 16, 24, 40, 48, 56};
  std::vector<std::vector<const Pipeline*>> seen(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round)
        for (uint32_t wg : sizes) seen[t].push_back(&ctx().pipeline(shaders::swish, {wg}));
    });
  for (auto& t : threads) t.join();
  for (const auto& s : seen) EXPECT_EQ(s, seen[0]);
  for (size_t i = 0; i < std::size(sizes); ++i) EXPECT_EQ(seen[0][i]->local_size(0), sizes[i]);
}

TEST_F(VulkanTest, DispatchChecksBindingCountAndPushSize) {
  Tensor a = ctx().tensor(DType::F32, {4}, "a");
  CommandStream s(ctx());
  const Pipeline& p = ctx().pipeline(shaders::add, {64});
  uint32_t n = 4;
  EXPECT_THROW(s.dispatch(p, {a, a}, n, 1), Error);
  uint64_t wrong = 4;
  EXPECT_THROW(s.dispatch(p, {a, a, a}, wrong, 1), Error);
}

TEST_F(VulkanTest, BarriersOnlyWhereAReadFollowsAWrite) {
  const int64_t n = 4096;
  auto a = random_floats(n, 1), b = random_floats(n, 2);
  Tensor ta = upload_floats(ctx(), a, DType::F32, {n}, "a"), tb = upload_floats(ctx(), b, DType::F32, {n}, "b");
  Tensor t1 = ctx().tensor(DType::F32, {n}, "t1"), t2 = ctx().tensor(DType::F32, {n}, "t2");
  Tensor t3 = ctx().tensor(DType::F32, {n}, "t3");
  CommandStream s(ctx());
  ops::add(s, ta, tb, t1);  // independent of the next one
  ops::add(s, ta, ta, t2);
  EXPECT_EQ(s.barrier_count(), 0u);
  ops::add(s, t1, t2, t3);  // reads both results: one barrier
  EXPECT_EQ(s.barrier_count(), 1u);
  ops::add(s, ta, tb, t1);  // overwrites t1 that the previous command read: write-after-read barrier
  EXPECT_EQ(s.barrier_count(), 2u);
  EXPECT_EQ(s.command_count(), 4u);
  s.submit_and_wait();
  auto got = download_floats(ctx(), t3);
  for (int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(got[i], (a[i] + b[i]) + (a[i] + a[i]));
}

TEST_F(VulkanTest, StreamIsReusableAfterWait) {
  Tensor x = upload_floats(ctx(), {1, 2, 3}, DType::F32, {3}, "x");
  CommandStream s(ctx());
  for (int i = 0; i < 3; ++i) {
    ops::add(s, x, x, x);
    s.submit_and_wait();
  }
  EXPECT_EQ(download_floats(ctx(), x), (std::vector<float>{8, 16, 24}));
}

TEST_F(VulkanTest, CopyRegionListsShareCommandsOnlyWhereIndependent) {
  const int64_t n = 16;
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<float>(i);
  // Three parts of one tensor: one buffer, so every region could share a command.
  Tensor t = ctx().tensor(DType::F32, {3 * n}, "abc");
  ctx().upload(t, 0, host.data(), host.size() * 4);
  const TensorView a = t.view().rows(0, n), b = t.view().rows(n, n), c = t.view().rows(2 * n, n);
  CommandStream s(ctx());
  const uint64_t t0 = ctx().counters().transfers;
  // Rows 0..3 one by one (merged into one region), then 8 and 12: independent, one command.
  s.copy({{a.rows(0, 1), b.rows(0, 1)},
          {a.rows(1, 1), b.rows(1, 1)},
          {a.rows(2, 2), b.rows(2, 2)},
          {a.rows(8, 1), b.rows(10, 1)},
          {a.rows(12, 1), b.rows(4, 1)}});
  EXPECT_EQ(s.command_count(), 1u);
  // A region that reads what an earlier one wrote waits for it (a new command after a barrier), and
  // the list goes on from there.
  s.copy({{a.rows(5, 1), c.rows(0, 1)},
          {c.rows(0, 1), c.rows(1, 1)},
          {a.rows(6, 1), c.rows(2, 1)},
          {b.rows(10, 1), c.rows(3, 1)}});
  EXPECT_EQ(s.command_count(), 3u);
  EXPECT_EQ(s.barrier_count(), 1u);
  EXPECT_EQ(ctx().counters().transfers - t0, 3u);
  EXPECT_THROW(s.copy({{a.rows(0, 2), c.rows(0, 1)}}), Error);
  s.submit_and_wait();
  const std::vector<float> got = download_floats(ctx(), t);
  EXPECT_EQ(std::vector<float>(got.begin() + n, got.begin() + n + 5), (std::vector<float>{0, 1, 2, 3, 12}));
  EXPECT_EQ(got[static_cast<size_t>(n + 10)], 8.0f);
  EXPECT_EQ(std::vector<float>(got.begin() + 2 * n, got.begin() + 2 * n + 4), (std::vector<float>{5, 5, 6, 8}));
}

TEST_F(VulkanTest, ProfilingGivesOneTimingPerCommand) {
  Tensor x = upload_floats(ctx(), random_floats(1000, 3), DType::F32, {1000}, "x");
  Tensor y = ctx().tensor(DType::F32, {1000}, "y");
  CommandStream s(ctx(), /*profile=*/true);
  ops::add(s, x, x, y);
  s.copy(y, x);
  s.fill(y, 0);
  s.submit_and_wait();
  if (!ctx().caps().timestamps) GTEST_SKIP() << "device has no timestamps";
  ASSERT_EQ(s.timings().size(), 3u);
  EXPECT_EQ(s.timings()[0].label, "add");
  EXPECT_EQ(s.timings()[1].label, "copy");
  for (const auto& t : s.timings()) EXPECT_GE(t.ms, 0.0);
}

// ContextOptions::batch_limit (the viewer's): streams submit every N commands and go on recording;
// results and per-command timings are as without it.
TEST(CommandStreamBatches, ALimitSplitsSubmitsKeepingResultsAndTimings) {
  auto instance = std::make_shared<Instance>();
  ContextOptions o = ContextOptions::from_environment();
  o.batch_limit = 2;
  Context c(instance, instance->preferred_device(), o);
  {
    Tensor x = upload_floats(c, {1, 2, 3}, DType::F32, {3}, "x");
    CommandStream s(c, /*profile=*/true);
    for (int i = 0; i < 5; ++i) ops::add(s, x, x, x);  // each reads the previous one's result
    s.submit_and_wait();
    EXPECT_EQ(download_floats(c, x), (std::vector<float>{32, 64, 96}));
    if (c.caps().timestamps) {
      EXPECT_EQ(s.timings().size(), 5u);
    }
  }
  EXPECT_EQ(instance->validation_log().take(), std::vector<std::string>{});
}

// Without VK_KHR_push_descriptor (SwiftShader; masked here on any device) every dispatch takes a
// set from the stream's DescriptorArena: more dispatches than one pool holds, reused over batches,
// give the results push descriptors give, with the validation layer silent.
TEST(DescriptorArenaTest, DispatchesWithoutPushDescriptorsSpanPoolsAndBatches) {
  auto instance = std::make_shared<Instance>();
  ContextOptions o = ContextOptions::from_environment();
  o.masked_features = "push-descriptor,int64";
  Context c(instance, instance->preferred_device(), o);
  ASSERT_FALSE(c.caps().push_descriptor);
  {
    Tensor x = upload_floats(c, {1, 2, 3}, DType::F32, {3}, "x");
    Tensor zero = upload_floats(c, {0, 0, 0}, DType::F32, {3}, "zero");
    CommandStream s(c);
    for (int batch = 0; batch < 2; ++batch) {
      for (int i = 0; i < 700; ++i) ops::add(s, x, zero, x);  // 700 sets: over one 512-set pool
      ops::add(s, x, x, x);
      s.submit_and_wait();
    }
    EXPECT_EQ(download_floats(c, x), (std::vector<float>{4, 8, 12}));
  }
  EXPECT_EQ(instance->validation_log().take(), std::vector<std::string>{});
}

// Views on offsets finer than the device's binding alignment (SwiftShader's 256 bytes; forced
// here) are copied to staging ranges and, when written, back: in place, aliased and with a batch
// limit that submits between a dispatch's copies, the results are those of aligned bindings.
TEST(BindingStagingTest, UnalignedViewsGiveTheResultsAlignedOnesDo) {
  auto instance = std::make_shared<Instance>();
  for (uint32_t batch_limit : {0u, 1u}) {
    ContextOptions o = ContextOptions::from_environment();
    o.masked_features = "small-offset-alignment";
    o.batch_limit = batch_limit;
    Context c(instance, instance->preferred_device(), o);
    ASSERT_EQ(c.caps().min_storage_buffer_offset_alignment % 256, 0u);
    const int64_t rows = 6, width = 20;  // 80-byte rows: every row but the first is unaligned
    auto a = random_floats(rows * width, 7), b = random_floats(rows * width, 8);
    Tensor ta = upload_floats(c, a, DType::F32, {rows, width}, "a");
    Tensor tb = upload_floats(c, b, DType::F32, {rows, width}, "b");
    {
      CommandStream s(c);
      for (int64_t r = 1; r < rows; ++r) {
        ops::add(s, ta.view().rows(r, 1), tb.view().rows(r - 1, 1), tb.view().rows(r, 1));  // b[r] = a[r] + b[r-1]
        ops::add(s, ta.view().rows(r, 1), ta.view().rows(r, 1), ta.view().rows(r, 1));      // a[r] *= 2, aliased
      }
      s.submit_and_wait();
    }
    auto want_b = b, want_a = a;
    for (int64_t r = 1; r < rows; ++r)
      for (int64_t j = 0; j < width; ++j) {
        want_b[r * width + j] = a[r * width + j] + want_b[(r - 1) * width + j];
        want_a[r * width + j] = 2 * a[r * width + j];
      }
    EXPECT_EQ(download_floats(c, tb), want_b) << "batch limit " << batch_limit;
    EXPECT_EQ(download_floats(c, ta), want_a) << "batch limit " << batch_limit;
  }
  EXPECT_EQ(instance->validation_log().take(), std::vector<std::string>{});
}

TEST(DescriptorArenaTest, MaskedFeaturesAreClearedAndUnknownNamesRefused) {
  DeviceCaps caps;
  caps.push_descriptor = caps.shader_int64 = caps.shader_float16 = caps.cooperative_matrix_nv = true;
  caps.coopmat_f16_16x16x16 = true;
  mask_device_features(caps, "int64,,float16");
  EXPECT_TRUE(caps.push_descriptor);
  EXPECT_FALSE(caps.shader_int64);
  EXPECT_FALSE(caps.coopmat_f16_16x16x16);  // derived from float16
  EXPECT_THROW(mask_device_features(caps, "push-descriptors"), Error);
}

TEST_F(VulkanTest, ValidationMessagesAreCaptured) {
  // A deliberately invalid call: a zero-sized buffer violates VUID-VkBufferCreateInfo-size-00912.
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = 0;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer b = VK_NULL_HANDLE;
  vkCreateBuffer(ctx().device(), &bi, nullptr, &b);
  if (b) vkDestroyBuffer(ctx().device(), b, nullptr);
  auto messages = ctx().instance().validation_log().take();  // consumed here so TearDown stays clean
  ASSERT_FALSE(messages.empty());
  EXPECT_NE(messages[0].find("size"), std::string::npos) << messages[0];
}

TEST(DeviceChoice, BadEnvironmentIndexIsAClearError) {
  setenv("VKSPEC_DEVICE", "99", 1);
  Instance instance{InstanceOptions{}};
  try {
    instance.preferred_device();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("VKSPEC_DEVICE"), std::string::npos);
  }
  setenv("VKSPEC_DEVICE", "0", 1);
  EXPECT_EQ(instance.preferred_device(), 0u);
  unsetenv("VKSPEC_DEVICE");
}

TEST(DeviceChoice, MissingRequiredExtensionIsNamed) {
  auto instance = std::make_shared<Instance>(InstanceOptions::from_environment());
  ContextOptions o = ContextOptions::from_environment();
  o.device_extensions = {"VK_VKSPEC_no_such_extension"};
  try {
    Context ctx(instance, instance->preferred_device(), o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("VK_VKSPEC_no_such_extension"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(instance->devices()[instance->preferred_device()].name), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(instance->validation_log().count(), 0u);
}

TEST(ContextOptionsTest, MatmulFoldsSwitch) {
  setenv("VKSPEC_DISABLE_MATMUL_FOLDS", "1", 1);
  EXPECT_TRUE(ContextOptions::from_environment().disable_matmul_folds);
  unsetenv("VKSPEC_DISABLE_MATMUL_FOLDS");
  EXPECT_FALSE(ContextOptions::from_environment().disable_matmul_folds);
}

TEST(ContextOptionsTest, CoopmatSwitchAndItsOldNameRefused) {
  setenv("VKSPEC_DISABLE_COOPMAT", "1", 1);
  EXPECT_TRUE(ContextOptions::from_environment().disable_coopmat);
  unsetenv("VKSPEC_DISABLE_COOPMAT");
  EXPECT_FALSE(ContextOptions::from_environment().disable_coopmat);
  setenv("VKSPEC_DISABLE_FP16", "1", 1);
  EXPECT_THROW(ContextOptions::from_environment(), Error);
  unsetenv("VKSPEC_DISABLE_FP16");
}

// VKSPEC_GEMV_ROWS_TILE: 0 turns the row-block GEMV off, R,MG[,FROM] shapes it, anything else
// is refused naming the value.
TEST(ContextOptionsTest, GemvRowsTileParsesAndRefusesBadShapes) {
  EXPECT_FALSE(ContextOptions::from_environment().gemv_rows_tile);
  // {outputs, rows per subgroup, from} as read from the setting.
  const auto tile = [](const char* setting) {
    setenv("VKSPEC_GEMV_ROWS_TILE", setting, 1);
    const auto t = ContextOptions::from_environment().gemv_rows_tile;
    return t ? std::vector<uint32_t>{t->outputs, t->rows_per_subgroup, t->from} : std::vector<uint32_t>{};
  };
  EXPECT_EQ(tile("0"), (std::vector<uint32_t>{0, 0, 0}));
  EXPECT_EQ(tile("8,4"), (std::vector<uint32_t>{8, 4, 0}));
  EXPECT_EQ(tile("16,2,1"), (std::vector<uint32_t>{16, 2, 1}));
  for (const char* bad : {"8", "17,2", "8,0", "8,2,0", "8,2,257", "a,b", "8,,2", "8,2,1,4", "-8,2", "8,2,"}) {
    setenv("VKSPEC_GEMV_ROWS_TILE", bad, 1);
    try {
      ContextOptions::from_environment();
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("VKSPEC_GEMV_ROWS_TILE=") + bad), std::string::npos) << e.what();
    }
  }
  unsetenv("VKSPEC_GEMV_ROWS_TILE");
}

// VKSPEC_GPU_KERNELS only changes what kernel choice reads: the device stays what it is.
TEST_F(VulkanTest, GpuKernelsClearOnlyTheCpuKernelChoice) {
  setenv("VKSPEC_GPU_KERNELS", "1", 1);
  ContextOptions o = ContextOptions::from_environment();
  unsetenv("VKSPEC_GPU_KERNELS");
  EXPECT_TRUE(o.gpu_kernels);
  EXPECT_FALSE(ContextOptions::from_environment().gpu_kernels);
  auto instance = std::make_shared<Instance>(InstanceOptions{true, false});
  Context gpu(instance, ctx().caps().index, o);
  EXPECT_FALSE(gpu.caps().cpu_driver);
  EXPECT_EQ(gpu.caps().device_type, ctx().caps().device_type);
  EXPECT_EQ(gpu.caps().subgroup_lane_reads, ctx().caps().subgroup_lane_reads);
  EXPECT_EQ(gpu.default_workgroup_size() % std::max(gpu.caps().max_subgroup_size, 1u), 0u);
  EXPECT_EQ(instance->validation_log().count(), 0u);
}

TEST(ContextOptionsTest, MemoryCapParsesUnitsAndRejectsGarbage) {
  setenv("VKSPEC_MAX_DEVICE_MEMORY", "512M", 1);
  EXPECT_EQ(ContextOptions::from_environment().device_memory_cap, 512ull << 20);
  setenv("VKSPEC_MAX_DEVICE_MEMORY", "lots", 1);
  EXPECT_THROW(ContextOptions::from_environment(), Error);
  unsetenv("VKSPEC_MAX_DEVICE_MEMORY");
}

// The KHR form of the cooperative-matrix kernel (no device here has either extension, so the
// rewrite is checked on the words): every NV instruction replaced, each matrix type with the use
// its multiply-add gives it, loads and stores with the layout their NV flag named, ids in bounds.
struct SpirvOp {
  uint32_t op;
  std::vector<uint32_t> operands;
};
std::vector<SpirvOp> spirv_ops(const std::vector<uint32_t>& w) {
  std::vector<SpirvOp> ops;
  for (size_t i = 5; i < w.size(); i += w[i] >> 16)
    ops.push_back({w[i] & 0xffffu, {w.begin() + i + 1, w.begin() + i + (w[i] >> 16)}});
  return ops;
}

TEST(CoopmatKhrTest, TheMatmulKernelGetsItsMatrixUsesAndLayouts) {
  const EmbeddedShader* nv = find_embedded_shader("matmul_coopmat");
  ASSERT_NE(nv, nullptr);
  const std::vector<uint32_t> nv_words(nv->words, nv->words + nv->word_count);
  const std::vector<uint32_t> khr = coopmat_nv_to_khr("matmul_coopmat", nv->words, nv->word_count);
  ASSERT_GE(khr[3], nv_words[3]);
  std::map<uint32_t, uint32_t> u32_value, type_of, use_of;  // constant id -> value, value -> type, type -> use id
  std::map<uint32_t, bool> bool_value;
  std::set<uint32_t> ops_seen;
  for (const SpirvOp& o : spirv_ops(nv_words))
    if (o.op == 41 || o.op == 42) bool_value[o.operands[1]] = o.op == 41;
  std::vector<bool> nv_load_column_major;
  for (const SpirvOp& o : spirv_ops(nv_words))
    if (o.op == 5359) nv_load_column_major.push_back(bool_value.at(o.operands[4]));
  std::vector<uint32_t> khr_load_layout;
  for (const SpirvOp& o : spirv_ops(khr)) {
    ops_seen.insert(o.op);
    if (o.op == 43 && o.operands.size() == 3) u32_value[o.operands[1]] = o.operands[2];
    if (o.op == 61 || o.op == 4457 || o.op == 4459) type_of[o.operands[1]] = o.operands[0];
    if (o.op == 4456) use_of[o.operands[0]] = u32_value.at(o.operands[5]);
    if (o.op == 4457) khr_load_layout.push_back(u32_value.at(o.operands[3]));
    if (o.op == 4458) {
      EXPECT_EQ(u32_value.at(o.operands[2]), 0u);  // the accumulator, row major
    }
    if (o.op == 4459) {
      EXPECT_EQ(use_of.at(type_of.at(o.operands[2])), 0u);  // A
      EXPECT_EQ(use_of.at(type_of.at(o.operands[3])), 1u);  // B
      EXPECT_EQ(use_of.at(type_of.at(o.operands[4])), 2u);  // C
      EXPECT_EQ(use_of.at(o.operands[0]), 2u);
    }
    if (o.op == 17) {
      EXPECT_NE(o.operands[0], 5357u);
    }
  }
  for (uint32_t op : {5358u, 5359u, 5360u, 5361u, 5362u}) EXPECT_EQ(ops_seen.count(op), 0u) << "NV opcode " << op;
  for (uint32_t op : {4456u, 4457u, 4458u, 4459u}) EXPECT_EQ(ops_seen.count(op), 1u) << "KHR opcode " << op;
  EXPECT_EQ(use_of.size(), 3u);
  ASSERT_EQ(khr_load_layout.size(), nv_load_column_major.size());
  for (size_t i = 0; i < khr_load_layout.size(); ++i) EXPECT_EQ(khr_load_layout[i], nv_load_column_major[i] ? 1u : 0u);
  EXPECT_NE(std::string(reinterpret_cast<const char*>(khr.data()), khr.size() * 4).find("SPV_KHR_cooperative_matrix"),
            std::string::npos);
}

// A and B of one type (the kernel before B had its own) cannot carry two uses: refused by name.
TEST(CoopmatKhrTest, ATypeInTwoRolesIsRefused) {
  auto op = [](uint32_t code, std::vector<uint32_t> operands) {
    operands.insert(operands.begin(), static_cast<uint32_t>(operands.size() + 1) << 16 | code);
    return operands;
  };
  std::vector<uint32_t> w = {0x07230203u, 0x00010300u, 0, 20, 0};
  for (const auto& i :
       {op(17, {5357}), op(21, {1, 32, 0}), op(22, {2, 16}), op(22, {3, 32}), op(43, {1, 4, 16}), op(43, {1, 5, 3}),
        op(5358, {6, 2, 5, 4, 4}), op(5358, {7, 3, 5, 4, 4}), op(1, {6, 8}), op(1, {7, 9}), op(5361, {7, 10, 8, 8, 9})})
    w.insert(w.end(), i.begin(), i.end());
  try {
    coopmat_nv_to_khr("two_roles", w.data(), w.size());
    FAIL() << "a type serving as A and B was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("two_roles"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("two roles"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkspec
