#pragma once
// `vkspec bench --report DIR|FILE[,...]`: no generation; the runs found in sample files of earlier
// --samples commands (shards of one run merged, eval/sample_completeness.h checking that every
// seed is there), reported as a live bench reports them (cli/bench_report.h), with --npz/--out-dir
// their images.
#include "frontend/arg_parser.h"

namespace vkspec::cli {

// The exit code; throws Error naming the missing seeds, or a tokenizer or classifier other than the
// one the samples recorded.
int report_sample_files(const frontend::ArgParser& ap);

}  // namespace vkspec::cli
