// vkspec bench: every requested method on the same classes and seeds in one process; one table
// (and JSON) of forwards, accepted length, latency, speedup against ar, class accuracy, FID against
// the Fashion-MNIST test set and against ar's own samples (eval/); a second table of quality with
// intervals: KID, FID-infinity, class accuracy's bootstrap interval, differences against ar paired
// on equal seeds, and with --precision-recall precision and recall (cli/quality_table.h).
// Method options (--window, --init, ...) go to the methods that know them; --sweep KEY=V1,V2,...
// repeats each method that knows KEY once per value.
// By job: what to run (bench_plan.h), running it (bench_run.h), the sample records
// (bench_samples.h), the report (bench_report.h), and --report of sample files (bench_report_files.h).
#include <string>
#include <vector>

#include "cli/bench_plan.h"
#include "cli/bench_report.h"
#include "cli/bench_report_files.h"
#include "cli/bench_run.h"
#include "cli/commands.h"
#include "cli/device_pool.h"
#include "cli/output_path.h"
#include "cli/sample_outputs.h"
#include "cli/sharded_images.h"
#include "frontend/arg_parser.h"
#include "frontend/model_catalog.h"
#include "frontend/shard_option.h"

namespace vkspec::cli {

std::vector<OptionSection> bench_sections() {
  std::vector<OptionSection> s = {
      {"",
       "",
       {{"--methods", "M1,M2,...", "the methods to compare (default ar; ar gives the speedups)"},
        {"--images", "N", "images per method (default 10; with --shard, of all shards together)"},
        {"--seed", "S",
         "seed of the first image; image i has seed S + i and class (S + i) mod the classes (default 0)"},
        frontend::shard_option(),
        {"--warmup", "N|auto",
         "untimed images per method first; auto (the default): at least one, then more "
         "while the last one ran a pipeline for the first time (a CPU driver compiles it "
         "then), at most 8"},
        {"--order", "interleaved|sequential",
         "interleaved (default): image i of every method before image i + 1 of any, so the machine's load "
         "changes reach every method alike (fair wall-clock ratios); sequential: one method after another"},
        {"--sweep", "KEY=V1,V2,...",
         "run each method that knows option KEY once per value; batch=1,4,16: each method that can batch once "
         "per batch size (the others at 1)"},
        {"--json", "FILE", "also write every result as JSON"},
        {"--profile", "", "GPU time per model and per kernel (per-command timestamps)"},
        {"--iterations", "",
         "Jacobi window methods (sjd, scd-mc, scd-gs, lantern): per visit of a position, how often its next draft "
         "equals this one (collision) and the share accepted; of the images generated, not of resumed ones"},
        {"--precision-recall", "", "also precision and recall against the test set (k = 3 neighbours, O(N^2))"},
        {"--samples", "DIR", "keep every image's record in DIR and resume from what it holds"},
        {"--report", "DIR|FILE[,...]",
         "no generation: one table from the sample files of earlier --samples runs (with --npz/--out-dir: their "
         "images); fails naming the missing seeds and shards when a run is incomplete"},
        {"--allow-partial", "", "--report: a table of what there is when seeds are missing (still named, on stderr)"},
        {"--dataset", "DIR|none", "Fashion-MNIST for FID against the test set (none: no such FID)"},
        {"--prompts", "FILE",
         "a prompt-driven model's evaluation set: a prompt per line (\"N<TAB>text\" gives class N for class "
         "accuracy); image with seed s takes prompt s mod their count"},
        frontend::classifier_option()}}};
  frontend::append_options(s[0].options, sample_output_options(true));
  frontend::append_options(s[0].options, device_pool_options());
  frontend::append_options(s[0].options, batch_options());
  for (OptionSection& shared : run_option_sections()) s.push_back(std::move(shared));
  return s;
}

int cmd_bench(const Args& args) {
  // --synthetic times the forwards of a generated model instead of generating images.
  for (const std::string& a : args)
    if (a == "--synthetic" || a.rfind("--synthetic=", 0) == 0) return cmd_bench_synthetic(args);
  frontend::ArgParser ap("bench", all_options(bench_sections()));
  ap.parse(args);
  if (auto path = ap.get("--json")) check_output_path(*path, "--json");
  if (ap.get("--report")) {
    for (const char* f : {"--methods", "--images", "--seed", "--shard", "--sweep", "--warmup", "--order", "--samples",
                          "--devices", "--batch"})
      if (ap.get(f)) throw Error(std::string("bench --report reads finished samples; ") + f + " does not apply");
    if (ap.flag("--iterations"))
      throw Error("bench --report: --iterations needs every step of an image, which sample files do not keep");
    return report_sample_files(ap);
  }
  const BenchPlan plan = plan_bench(ap);
  LiveBenchResults live = run_bench(ap, plan);
  report_runs(live.results, live.header, live.reference, {ap.flag("--precision-recall")}, ap.get("--json"));
  return 0;
}

}  // namespace vkspec::cli
