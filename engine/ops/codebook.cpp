#include "engine/ops/codebook.h"

#include "engine/ops/dispatch_util.h"
#include "shaders/shader_ids.h"

namespace vkspec::ops {
namespace {

void check_codebook(const TensorView& cb, const char* op, const std::string& what) {
  require(cb.dtype == DType::F32 && cb.shape.rank == 2 && cb.shape[0] >= 1 && cb.shape[1] >= 1, op,
          [&] { return "codebook must be a non-empty f32 [n_e, e_dim]: " + what; });
  require(static_cast<uint64_t>(cb.numel()) < (1ull << 32), op, [&] { return "codebook too large: " + what; });
}

}  // namespace

void codebook_lookup(CommandStream& s, const TensorView& ids, const TensorView& codebook, const TensorView& out) {
  const auto what = [&] {
    return "ids " + ids.shape.str() + ", codebook " + codebook.shape.str() + ", out " + out.shape.str();
  };
  check_codebook(codebook, "codebook_lookup", what());
  require(ids.dtype == DType::U32 || ids.dtype == DType::I32, "codebook_lookup",
          [&] { return "ids must be u32 or i32: " + what(); });
  require(out.dtype == DType::F32, "codebook_lookup", [&] { return "out must be f32: " + what(); });
  const int64_t e_dim = codebook.shape[1];
  require(out.numel() == ids.numel() * e_dim, "codebook_lookup",
          [&] { return "out must hold ids x e_dim values: " + what(); });
  require(static_cast<uint64_t>(out.numel()) < (1ull << 32), "codebook_lookup",
          [&] { return "too many ids: " + what(); });
  if (ids.numel() == 0) return;
  Context& ctx = s.context();
  const uint32_t wg = ctx.default_workgroup_size();
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(ids.numel()), wg);
  struct {
    uint32_t count, n_e, e_dim;
  } push{static_cast<uint32_t>(ids.numel()), static_cast<uint32_t>(codebook.shape[0]), static_cast<uint32_t>(e_dim)};
  s.dispatch(ctx.pipeline(shaders::codebook_lookup, {wg}), {ids, codebook, out}, push, g.x, g.y);
}

CodebookQuantizeKernel codebook_quantize_default_kernel(const Context& ctx) {
  CodebookQuantizeKernel k;
  const DeviceCaps& c = ctx.caps();
  k.subgroup_codes = c.cpu_driver;
  return k;
}

void codebook_quantize(CommandStream& s, const TensorView& latents, const TensorView& codebook, const TensorView& ids) {
  codebook_quantize(s, latents, codebook, ids, codebook_quantize_default_kernel(s.context()));
}

void codebook_quantize(CommandStream& s, const TensorView& latents, const TensorView& codebook, const TensorView& ids,
                       const CodebookQuantizeKernel& kernel) {
  const auto what = [&] {
    return "latents " + latents.shape.str() + ", codebook " + codebook.shape.str() + ", ids " + ids.shape.str();
  };
  check_codebook(codebook, "codebook_quantize", what());
  require(latents.dtype == DType::F32 && ids.dtype == DType::U32, "codebook_quantize",
          [&] { return "latents must be f32 and ids u32: " + what(); });
  const int64_t e_dim = codebook.shape[1];
  require(e_dim <= 64, "codebook_quantize", [&] { return "e_dim above 64: " + what(); });
  require(latents.shape.rank >= 1 && latents.shape[latents.shape.rank - 1] == e_dim, "codebook_quantize",
          [&] { return "latents' last dimension must be e_dim: " + what(); });
  require(ids.numel() * e_dim == latents.numel(), "codebook_quantize",
          [&] { return "ids must hold one id per latent: " + what(); });
  require(static_cast<uint64_t>(latents.numel()) < (1ull << 32), "codebook_quantize",
          [&] { return "too many latents: " + what(); });
  require(kernel.codes >= 1 && kernel.codes <= 16, "codebook_quantize", "codes per block must be 1 to 16");
  if (ids.numel() == 0) return;
  Context& ctx = s.context();
  const DeviceCaps& caps = ctx.caps();
  const uint32_t sg = std::max<uint32_t>(caps.subgroup_size, 1);
  const bool shared = kernel.subgroup_codes && caps.subgroup_lane_reads;
  // Whole subgroups for the broadcasts; small groups so that a few hundred positions still
  // spread over every thread of a CPU driver.
  const uint32_t wg = std::max<uint32_t>(32, sg);
  const Pipeline& p = ctx.pipeline(shared ? shaders::codebook_quantize_shared : shaders::codebook_quantize,
                                   {wg, static_cast<uint32_t>(e_dim), kernel.codes, sg});
  const Grid g = grid_1d(ctx, static_cast<uint64_t>(ids.numel()), wg);
  struct {
    uint32_t count, n_e;
  } push{static_cast<uint32_t>(ids.numel()), static_cast<uint32_t>(codebook.shape[0])};
  s.dispatch(p, {latents, codebook, ids}, push, g.x, g.y);
}

}  // namespace vkspec::ops
