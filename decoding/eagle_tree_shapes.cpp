#include "decoding/eagle_tree_shapes.h"

#include <algorithm>

#include "common/error.h"

namespace vkspec {
namespace {

// Each path written as its ranks, one digit each (every rank of these lists is < 10), listed
// parents before children as the code lists them.
std::vector<std::vector<int32_t>> decode(const std::vector<const char*>& paths) {
  std::vector<std::vector<int32_t>> out;
  for (const char* p : paths) {
    std::vector<int32_t> ranks;
    for (const char* c = p; *c; ++c) ranks.push_back(*c - '0');
    out.push_back(std::move(ranks));
  }
  return out;
}

}  // namespace

EagleShape parse_eagle_shape(const std::string& name) {
  if (name == "cost") return EagleShape::Cost;
  if (name == "mc_sim_7b_63") return EagleShape::McSim7b63;
  if (name == "naive_extend_57") return EagleShape::NaiveExtend57;
  throw Error("unknown draft tree shape '" + name + "' (expected cost, mc_sim_7b_63 or naive_extend_57)");
}

const char* eagle_shape_name(EagleShape s) {
  switch (s) {
    case EagleShape::Cost: return "cost";
    case EagleShape::McSim7b63: return "mc_sim_7b_63";
    case EagleShape::NaiveExtend57: return "naive_extend_57";
  }
  return "?";
}

std::vector<std::string> eagle_shape_names() { return {"cost", "mc_sim_7b_63", "naive_extend_57"}; }

const std::vector<std::vector<int32_t>>& eagle_named_paths(EagleShape s) {
  // Despite its name mc_sim_7b_63 has 25 nodes here (EAGLE-1's list; Medusa's of that name has 63).
  static const std::vector<std::vector<int32_t>> mc_sim =
      decode({"0",     "1",    "2",    "3",                                //
              "00",    "01",   "02",   "10",  "11",  "20",  "21",  "30",   //
              "000",   "001",  "002",  "010", "011", "020", "021", "100",  //
              "0000",  "0001", "0002",                                     //
              "00000", "00001"});
  static const std::vector<std::vector<int32_t>> naive = decode(
      {"0",     "1",     "2",     "3",     "4",                                                                       //
       "00",    "01",    "02",    "03",    "10",    "11",    "12",    "20",    "21",   "22",   "30",   "31",  "40",   //
       "000",   "001",   "002",   "003",   "010",   "011",   "012",   "020",   "021",  "022",  "030",  "031", "100",  //
       "101",   "110",   "200",                                                                                       //
       "0000",  "0001",  "0002",  "0003",  "0010",  "0011",  "0012",  "0020",  "0021", "0030", "0100",                //
       "0101",  "0110",  "0200",                                                                                      //
       "00000", "00001", "00002", "00010", "00011", "00100", "00101", "00110", "00200"});
  switch (s) {
    case EagleShape::McSim7b63: return mc_sim;
    case EagleShape::NaiveExtend57: return naive;
    case EagleShape::Cost: break;
  }
  throw Error("draft tree shape cost has no fixed paths (they follow --depth, --topk and --nodes)");
}

ShapeExtent eagle_shape_extent(const std::vector<std::vector<int32_t>>& paths) {
  ShapeExtent e;
  e.nodes = static_cast<int64_t>(paths.size());
  for (const std::vector<int32_t>& p : paths) {
    e.depth = std::max<int64_t>(e.depth, static_cast<int64_t>(p.size()));
    for (int32_t r : p) e.topk = std::max<int64_t>(e.topk, r + 1);
  }
  return e;
}

}  // namespace vkspec
