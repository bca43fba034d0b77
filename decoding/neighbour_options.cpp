#include "decoding/neighbour_options.h"

#include "common/error.h"
#include "decoding/strategy.h"
#include "engine/model/codebook_neighbours.h"

namespace vkspec {

OptionSpec neighbour_metric_spec() {
  return OptionSpec::choice("metric", neighbour_metric_name(NeighbourMetric::L2),
                            {kNeighbourMetricNames.begin(), kNeighbourMetricNames.end()},
                            "how the nearest codebook entries are chosen: L2 distance or cosine similarity between "
                            "the codebook rows, or a fixed random set (LANTERN's ablation control)");
}

NeighbourMetric neighbour_metric_of(const OptionValues& o) { return parse_neighbour_metric(o.choice("metric")); }

void NeighbourTables::add(const CodebookNeighbours* table) {
  if (table) by_metric[static_cast<size_t>(table->metric())] = table;
}

const CodebookNeighbours& neighbour_table(const ModelSet& models, NeighbourMetric metric, const std::string& method) {
  const CodebookNeighbours* t = models.neighbours.find(metric);
  if (!t)
    throw Error(method + ": needs the codebook neighbour table with --metric " + neighbour_metric_name(metric) +
                " (built from the VQ model's codebook), and it is not loaded");
  const int64_t vocab = models.target->config().vocab_size;
  if (t->entries() != vocab)
    throw Error(method + ": the neighbour table has " + std::to_string(t->entries()) +
                " entries, the model's vocabulary is " + std::to_string(vocab));
  return *t;
}

}  // namespace vkspec
