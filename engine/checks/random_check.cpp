// philox_fill on the GPU against engine/ops/philox.h on the CPU: every word must be identical
// (error = fraction of differing words).
#include "engine/checks/op_check.h"
#include "engine/ops/random.h"
#include "engine/ref/random_ref.h"

#include <random>

namespace vkspec {
namespace {

CheckResult check_fill(Context& ctx, ops::RandomKind kind, uint32_t rows, uint32_t draws, uint32_t first_draw,
                       uint64_t seed, uint32_t purpose) {
  std::mt19937 rng(static_cast<uint32_t>(seed ^ rows));
  std::vector<uint32_t> positions(rows);
  for (auto& p : positions) p = rng();
  positions[0] = 0;
  positions[rows - 1] = 0xFFFFFFFFu;
  Tensor pos = ctx.tensor(DType::U32, {rows}, "positions");
  ctx.upload(pos, positions.data(), positions.size() * 4);
  const DType dt = kind == ops::RandomKind::Bits ? DType::U32 : DType::F32;
  Tensor out = ctx.tensor(dt, {rows, draws}, "draws");
  CommandStream s(ctx);
  ops::philox_fill(s, pos, seed, purpose, first_draw, kind, out);
  s.submit_and_wait();
  std::vector<uint32_t> got(size_t{rows} * draws);
  ctx.download(out, got.data(), got.size() * 4);
  const auto want = ref::philox_fill(positions, seed, purpose, first_draw, draws, kind);
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
  return {static_cast<double>(bad) / got.size(), 0.0,
          std::to_string(bad) + " of " + std::to_string(got.size()) + " words differ"};
}

using ops::RandomKind;
using philox::Purpose;
using philox::purpose_word;

VKSPEC_OP_CHECK("philox_fill", "bits rows=4096 draws=37", [](Context& c) {
  return check_fill(c, RandomKind::Bits, 4096, 37, 0, 0x0123456789ABCDEFull, purpose_word(Purpose::Sample));
});
VKSPEC_OP_CHECK("philox_fill", "uniform rows=2048 draws=64 first=3", [](Context& c) {
  return check_fill(c, RandomKind::Uniform, 2048, 64, 3, 42, purpose_word(Purpose::Accept, 7));
});
VKSPEC_OP_CHECK("philox_fill", "gumbel rows=1024 draws=257", [](Context& c) {
  return check_fill(c, RandomKind::Gumbel, 1024, 257, 0, 0xFFFFFFFFFFFFFFFFull, purpose_word(Purpose::DraftGumbel));
});
VKSPEC_OP_CHECK("philox_fill", "gumbel rows=3 draws=100000 first=2^32-10^5", [](Context& c) {
  return check_fill(c, RandomKind::Gumbel, 3, 100000, 0xFFFFFFFFu - 99999u, 7, purpose_word(Purpose::Residual, 3));
});
// 144 MB of output: over lavapipe's 128 MiB maxStorageBufferRange, so two dispatches.
VKSPEC_OP_CHECK("philox_fill", "bits rows=3 draws=12M (split dispatch)", [](Context& c) {
  return check_fill(c, RandomKind::Bits, 3, 12000000, 0, 5, purpose_word(Purpose::Test));
});

}  // namespace
}  // namespace vkspec
