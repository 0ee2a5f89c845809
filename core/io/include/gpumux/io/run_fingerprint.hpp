// A run's fingerprint: SHA-256 over everything that decides its results, so a sweep can tell
// a complete point from a stale one. Covers the resolved config (after --set; without out_dir
// and max_output_gib, which decide where and how much is written, not what), the expanded
// workload (so an edited job or arrivals file counts, not just the config's text), a cluster's
// expanded topology (its links after defaults), the bytes of the model and device-profile files
// the run uses, the gpumux version and the summary format (kSummaryFormat, summary.hpp). It
// does not cover other code changes within one version: re-run with --force after changing
// gpumux itself.
#pragma once

#include <filesystem>
#include <string>

#include "gpumux/io/config.hpp"

namespace gpumux {

/// 64 hex digits. Pure apart from reading the model and profile files under `repo_root`.
[[nodiscard]] std::string run_fingerprint(const ExperimentConfig& config,
                                          const std::filesystem::path& repo_root);

}  // namespace gpumux
