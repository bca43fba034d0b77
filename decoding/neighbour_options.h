#pragma once
// The --metric option of the methods whose acceptance reads the codebook neighbour table (LANTERN,
// --accept lantern, --verify lantern, MuLo-SD's pooling), and the one way a strategy gets its
// table from the ModelSet.
#include <string>

#include "decoding/option_spec.h"
#include "engine/model/neighbour_metric.h"

namespace vkspec {

class CodebookNeighbours;
struct ModelSet;

OptionSpec neighbour_metric_spec();
NeighbourMetric neighbour_metric_of(const OptionValues& o);
// The table of `metric` checked against the target's vocabulary; throws naming the method when
// it is not loaded or does not match.
const CodebookNeighbours& neighbour_table(const ModelSet& models, NeighbourMetric metric, const std::string& method);

}  // namespace vkspec
