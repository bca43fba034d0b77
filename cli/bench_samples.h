#pragma once
// Bench's sample records (eval/sample_set.h): what identifies a run's images (method, options,
// model files, sampler, classifier, device, kernel rounding), so that --samples resumes only a
// file of the same settings and --report merges only equal runs; the file a run's records are
// kept in; and a run's images written as --npz/--out-dir.
#include <cstdint>
#include <map>
#include <string>

#include "cli/sample_outputs.h"
#include "cli/token_images.h"
#include "decoding/sampler_settings.h"
#include "eval/sample_set.h"
#include "frontend/model_loading.h"

namespace vkspec::cli {

// A model file's identity "NAME#HASH" (file_identity), hashed once per process. Not locked: one
// thread at a time asks (worker 0's task building the runs' metadata, or --report on the main thread).
const std::string& model_identity(const std::string& path);

// What identifies a run's images: see eval/sample_set.h. classifier: its path, "" when not judged;
// devices: the pool's device names; rounding: the kernels' (engine/ops/kernel_rounding.h).
std::map<std::string, std::string> run_meta(const frontend::MethodRun& run, const frontend::LoadedModels& loaded,
                                            const SamplerSettings& ss, const std::string& classifier,
                                            const std::string& devices, const std::string& rounding);

// The target model of a run, "NAME#HASH" (ar is compared with runs on the same target).
std::string target_of(const SampleSet& s);

// The file a run's images are kept in under --samples DIR: one per method, options and first seed,
// so shards started with other --seed values never write the same file.
std::string samples_file(const std::string& dir, const frontend::MethodRun& run, uint64_t seed);

// --npz and --out-dir of one run: its requested seeds in seed order, generated now or resumed.
void write_run_samples(const SampleOutputs& where, TokenImages& decoder, const SampleSet& shown, int64_t tokens);

}  // namespace vkspec::cli
