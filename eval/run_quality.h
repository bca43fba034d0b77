#pragma once
// Every quality number `vkspec bench` reports of one run, from its summary (eval/sample_summary.h,
// itself from the per-image records, so live, resumed and merged runs agree), the test set's
// reference and ar's run on the same target: FID and FID-infinity against the test set, KID with
// its standard error, class accuracy's bootstrap interval, FID against ar's samples, the paired
// differences against ar on common seeds and, on request, precision and recall.
#include <optional>

#include "eval/bootstrap.h"
#include "eval/frechet.h"
#include "eval/kid.h"
#include "eval/paired_difference.h"
#include "eval/reference_stats.h"
#include "eval/sample_summary.h"

namespace vkspec {

// The reference's derived forms, computed once for all runs of a report.
struct QualityReference {
  FrechetReference frechet;  // the statistics and their covariance's square root
  KidReference kid;          // the feature vectors and their kernel sums
  bool empty() const { return frechet.stats.dim == 0; }
};
// An empty ReferenceSet (no dataset) gives an empty QualityReference.
QualityReference quality_reference(const ReferenceSet& reference);

struct QualityOptions {
  bool precision_recall = false;  // O(N^2) in the number of images
};

struct RunQuality {
  // Against the test set (nullopt without a reference or with too few judged images).
  std::optional<double> fid, kid, kid_se, fid_inf, precision, recall;
  std::optional<double> fid_vs_ar;            // against ar's samples
  std::optional<Interval> class_accuracy_ci;  // 95 % percentile bootstrap over the judged images
  // Against ar's run on the seeds both have (nullopt for ar itself, without ar, or for no common seed).
  std::optional<PairedDifference> nfe_vs_ar, time_vs_ar, accuracy_vs_ar;
};

// `ar`: ar's run on the same target, sampler and classifier, or nullptr; `run` may be ar itself.
RunQuality assess_quality(const SampleSummary& run, const SampleSummary* ar, const QualityReference& reference,
                          const QualityOptions& options);

}  // namespace vkspec
