#include <random>

#include "engine/checks/op_check.h"
#include "engine/ops/embedding.h"
#include "engine/ref/embedding_ref.h"

namespace vkspec {
namespace {

// bad_ids: include ids outside [0, vocab) (negative for i32), which must clamp, not fault.
// repeat: output rows per id (the rows of a CFG pair read the same ids: out [repeat x T, D]).
CheckResult check_embedding(Context& ctx, int64_t vocab, int64_t dim, int64_t tokens, DType tdt, DType idt,
                            bool bad_ids, int64_t repeat = 1) {
  auto table = random_floats(static_cast<size_t>(vocab * dim), 31);
  if (tdt == DType::F16) table = round_to_half(table);
  std::mt19937_64 rng(32);
  std::vector<int64_t> ids(static_cast<size_t>(tokens));
  std::vector<uint32_t> raw(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    int64_t id = static_cast<int64_t>(rng() % static_cast<uint64_t>(vocab));
    if (i == 0) id = vocab - 1;  // last row: the end of the (last) binding chunk
    if (bad_ids && i % 3 == 1) id = idt == DType::I32 ? -1 - static_cast<int64_t>(rng() % 1000) : vocab + 7;
    raw[i] = static_cast<uint32_t>(id);
    ids[i] = id;
  }
  Tensor ttab = upload_floats(ctx, table, tdt, {vocab, dim}, "table");
  Tensor tids = ctx.tensor(idt, {tokens}, "ids");
  ctx.upload(tids, raw.data(), raw.size() * 4);
  Tensor tout = ctx.tensor(DType::F32, {repeat * tokens, dim}, "out");
  CommandStream s(ctx);
  ops::embedding(s, ttab, tids, tout);
  s.submit_and_wait();
  const auto one = ref::embedding(table, vocab, dim, ids);
  std::vector<float> want;
  for (int64_t r = 0; r < repeat; ++r) want.insert(want.end(), one.begin(), one.end());
  return {normalised_error(download_floats(ctx, tout), want), 0,
          "V=" + std::to_string(vocab) + " D=" + std::to_string(dim) + " T=" + std::to_string(tokens) +
              (repeat > 1 ? " x" + std::to_string(repeat) + " rows" : "")};
}

VKSPEC_OP_CHECK("embedding", "V=1 D=3 T=1 f32 u32",
                [](Context& c) { return check_embedding(c, 1, 3, 1, DType::F32, DType::U32, false); });
VKSPEC_OP_CHECK("embedding", "V=1001 D=768 T=2 f32 i32 clamp",
                [](Context& c) { return check_embedding(c, 1001, 768, 2, DType::F32, DType::I32, true); });
VKSPEC_OP_CHECK("embedding", "V=16384 D=1280 T=257 f16 u32 clamp",
                [](Context& c) { return check_embedding(c, 16384, 1280, 257, DType::F16, DType::U32, true); });
VKSPEC_OP_CHECK("embedding", "V=16384 D=1001 T=33 f16 i32",
                [](Context& c) { return check_embedding(c, 16384, 1001, 33, DType::F16, DType::I32, false); });
VKSPEC_OP_CHECK("embedding", "V=1024 D=256 T=17 f16 u32 two batch rows",
                [](Context& c) { return check_embedding(c, 1024, 256, 17, DType::F16, DType::U32, false, 2); });
VKSPEC_OP_CHECK("embedding", "V=101 D=9 T=3 f32 i32 clamp three batch rows",
                [](Context& c) { return check_embedding(c, 101, 9, 3, DType::F32, DType::I32, true, 3); });
// 137 MB of f32 rows: over lavapipe's 128 MiB maxStorageBufferRange, so bound in two chunks.
VKSPEC_OP_CHECK("embedding", "V=34000 D=1009 T=300 f32 chunked",
                [](Context& c) { return check_embedding(c, 34000, 1009, 300, DType::F32, DType::I32, true); });

}  // namespace
}  // namespace vkspec
