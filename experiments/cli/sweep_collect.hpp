// A sweep's own tables: summary.csv (one row per job per point) and summary_run.csv (one row
// per point) in the sweep's folder, made from the points' result folders only, so a sweep run
// on one machine, in shards or as a Slurm array gives byte-identical tables. Main thread.
#pragma once

#include <filesystem>

#include "sweep_file.hpp"

namespace gpumux::cli {

/// Reads every point's summary.json and run.json under `out_root`/<label> and writes
/// `out_root`/summary.csv and summary_run.csv (each to a temporary name, then renamed). Throws
/// UsageError listing the points without a complete result; nothing is written then.
void collect_sweep(const SweepFile& sweep, const std::filesystem::path& out_root);

}  // namespace gpumux::cli
