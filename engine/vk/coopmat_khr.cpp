#include "engine/vk/coopmat_khr.h"

#include <cstring>
#include <map>

#include "common/error.h"

namespace vkspec {
namespace {

// SPIR-V numbers (SPV_NV_cooperative_matrix, SPV_KHR_cooperative_matrix); the packaged headers
// know the NV ones only.
enum : uint32_t {
  kOpExtension = 10,
  kOpCapability = 17,
  kOpTypeInt = 21,
  kOpConstantTrue = 41,
  kOpConstantFalse = 42,
  kOpConstant = 43,
  kCapNv = 5357,
  kCapKhr = 6022,
  kOpTypeNv = 5358,
  kOpLoadNv = 5359,
  kOpStoreNv = 5360,
  kOpMulAddNv = 5361,
  kOpLengthNv = 5362,
  kOpTypeKhr = 4456,
  kOpLoadKhr = 4457,
  kOpStoreKhr = 4458,
  kOpMulAddKhr = 4459,
  kOpLengthKhr = 4460,
};
enum Use : uint32_t { kUseA = 0, kUseB = 1, kUseAccumulator = 2 };

// Opcodes whose first two operands are a result type and a result: the ones a multiply-add's
// operands come from in the kernels (loads, other multiply-adds, phis, copies, constants).
bool defines_typed_value(uint32_t op) {
  switch (op) {
    case 1:    // OpUndef
    case 44:   // OpConstantComposite
    case 46:   // OpConstantNull
    case 51:   // OpSpecConstantComposite
    case 61:   // OpLoad
    case 80:   // OpCompositeConstruct
    case 81:   // OpCompositeExtract
    case 83:   // OpCopyObject
    case 115:  // OpFConvert
    case 169:  // OpSelect
    case 245:  // OpPhi
    case kOpLoadNv:
    case kOpMulAddNv: return true;
    default: return false;
  }
}

struct Instruction {
  uint32_t op;
  std::vector<uint32_t> operands;
};

// The operands each rewritten instruction must have at least (NV forms).
size_t fewest_operands(uint32_t op) {
  switch (op) {
    case kOpCapability:
    case kOpExtension: return 1;
    case kOpTypeInt:
    case kOpConstant: return 3;
    case kOpConstantTrue:
    case kOpConstantFalse:
    case kOpLengthNv: return 2;
    case kOpStoreNv: return 4;
    case kOpTypeNv:
    case kOpLoadNv:
    case kOpMulAddNv: return 5;
    default: return defines_typed_value(op) ? 2 : 0;
  }
}

std::vector<Instruction> parse(const std::string& shader, const uint32_t* words, size_t n) {
  if (n < 5 || words[0] != 0x07230203u) throw Error("shader " + shader + ": not a SPIR-V module");
  std::vector<Instruction> out;
  for (size_t i = 5; i < n;) {
    const uint32_t count = words[i] >> 16, op = words[i] & 0xffffu;
    if (count == 0 || i + count > n || count - 1 < fewest_operands(op))
      throw Error("shader " + shader + ": malformed SPIR-V at word " + std::to_string(i));
    out.push_back({op, std::vector<uint32_t>(words + i + 1, words + i + count)});
    i += count;
  }
  return out;
}

std::vector<uint32_t> literal_string(const std::string& s) {
  std::vector<uint32_t> w((s.size() + 4) / 4, 0u);  // with the terminating zero
  for (size_t i = 0; i < s.size(); ++i)
    w[i / 4] |= static_cast<uint32_t>(static_cast<unsigned char>(s[i])) << (8 * (i % 4));
  return w;
}

// Each matrix type's use, from the multiply-adds: A, B, and C and the result (accumulator).
std::map<uint32_t, Use> matrix_uses(const std::string& shader, const std::vector<Instruction>& code) {
  std::map<uint32_t, uint32_t> type_of;
  for (const Instruction& in : code)
    if (defines_typed_value(in.op) && in.operands.size() >= 2) type_of[in.operands[1]] = in.operands[0];
  std::map<uint32_t, Use> uses;
  auto assign = [&](uint32_t type, Use use) {
    const auto [it, fresh] = uses.emplace(type, use);
    if (!fresh && it->second != use)
      throw Error("shader " + shader + ": cooperative-matrix type %" + std::to_string(type) +
                  " serves two roles of a multiply-add; give each role its own type");
  };
  for (const Instruction& in : code) {
    if (in.op != kOpMulAddNv) continue;
    const Use roles[3] = {kUseA, kUseB, kUseAccumulator};
    for (int k = 0; k < 3; ++k) {
      const auto t = type_of.find(in.operands[2 + static_cast<size_t>(k)]);
      if (t == type_of.end())
        throw Error("shader " + shader + ": cannot tell the type of a multiply-add operand %" +
                    std::to_string(in.operands[2 + static_cast<size_t>(k)]));
      assign(t->second, roles[k]);
    }
    assign(in.operands[0], kUseAccumulator);
  }
  for (const Instruction& in : code)
    if (in.op == kOpTypeNv && !uses.count(in.operands[0]))
      throw Error("shader " + shader + ": cooperative-matrix type %" + std::to_string(in.operands[0]) +
                  " is in no multiply-add, so its use is unknown");
  return uses;
}

}  // namespace

std::vector<uint32_t> coopmat_nv_to_khr(const std::string& shader, const uint32_t* words, size_t word_count) {
  std::vector<Instruction> code = parse(shader, words, word_count);
  const std::map<uint32_t, Use> uses = matrix_uses(shader, code);
  uint32_t bound = words[3];
  // u32 constants for the uses and layouts (made before the first matrix type where missing), and
  // the bool constants a load's or store's column-major flag names.
  uint32_t u32 = 0;
  std::map<uint32_t, uint32_t> u32_constant;  // value -> id
  std::map<uint32_t, bool> flag;              // bool constant id -> value
  for (const Instruction& in : code) {
    if (in.op == kOpTypeInt && in.operands[1] == 32 && in.operands[2] == 0 && !u32) u32 = in.operands[0];
    if (in.op == kOpConstant && in.operands[0] == u32 && in.operands.size() == 3 && in.operands[2] <= 2)
      u32_constant.emplace(in.operands[2], in.operands[1]);
    if (in.op == kOpConstantTrue || in.op == kOpConstantFalse) flag[in.operands[1]] = in.op == kOpConstantTrue;
  }
  if (!u32) throw Error("shader " + shader + ": no 32-bit unsigned integer type for the matrix uses");
  std::vector<uint32_t> out(words, words + 5);
  auto emit = [&](uint32_t op, const std::vector<uint32_t>& operands) {
    out.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 | op);
    out.insert(out.end(), operands.begin(), operands.end());
  };
  auto layout = [&](uint32_t flag_id) {
    const auto f = flag.find(flag_id);
    if (f == flag.end()) throw Error("shader " + shader + ": a cooperative-matrix load's layout is not a constant");
    return u32_constant.at(f->second ? 1u : 0u);  // ColumnMajorKHR 1, RowMajorKHR 0
  };
  bool constants_made = false;
  for (Instruction& in : code) {
    std::vector<uint32_t>& o = in.operands;
    switch (in.op) {
      case kOpCapability: emit(kOpCapability, {o[0] == kCapNv ? uint32_t{kCapKhr} : o[0]}); break;
      case kOpExtension: {
        const char* text = reinterpret_cast<const char*>(o.data());
        const std::string name(text, strnlen(text, o.size() * 4));
        emit(kOpExtension, literal_string(name == "SPV_NV_cooperative_matrix" ? "SPV_KHR_cooperative_matrix" : name));
        break;
      }
      case kOpTypeNv:
        if (!constants_made) {
          for (uint32_t v = 0; v <= 2; ++v)
            if (!u32_constant.count(v)) {
              u32_constant[v] = bound++;
              emit(kOpConstant, {u32, u32_constant[v], v});
            }
          constants_made = true;
        }
        emit(kOpTypeKhr, {o[0], o[1], o[2], o[3], o[4], u32_constant.at(uses.at(o[0]))});
        break;
      case kOpLoadNv: {  // type, result, pointer, stride, column-major[, memory access...]
        std::vector<uint32_t> k = {o[0], o[1], o[2], layout(o[4]), o[3]};
        k.insert(k.end(), o.begin() + 5, o.end());
        emit(kOpLoadKhr, k);
        break;
      }
      case kOpStoreNv: {  // pointer, object, stride, column-major[, memory access...]
        std::vector<uint32_t> k = {o[0], o[1], layout(o[3]), o[2]};
        k.insert(k.end(), o.begin() + 4, o.end());
        emit(kOpStoreKhr, k);
        break;
      }
      case kOpMulAddNv: emit(kOpMulAddKhr, o); break;
      case kOpLengthNv: emit(kOpLengthKhr, o); break;
      default: emit(in.op, o);
    }
  }
  out[3] = bound;
  return out;
}

bool has_coopmat_khr_16x16x16_f16(VkPhysicalDevice pd) {
  using Query = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, CoopmatKhrProperties*);
  const auto query =
      reinterpret_cast<Query>(vkGetInstanceProcAddr(volkGetLoadedInstance(),
                                                    "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
  if (!query) return false;
  uint32_t n = 0;
  query(pd, &n, nullptr);
  std::vector<CoopmatKhrProperties> props(n);
  query(pd, &n, props.data());
  for (const CoopmatKhrProperties& p : props)
    if (p.MSize == 16 && p.NSize == 16 && p.KSize == 16 && p.AType == 0 && p.BType == 0 && p.CType == 1 &&
        p.ResultType == 1 && !p.saturatingAccumulation && p.scope == 3)
      return true;
  return false;
}

}  // namespace vkspec
