// A sweep's own tables: summary.csv (one row per job per point) and summary_run.csv (one row
// per point) in the sweep's folder, made from the points' result folders only, so a sweep run
// on one machine, in shards or as a Slurm array gives byte-identical tables. Main thread.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "sweep_file.hpp"

namespace gpumux::cli {

/// A point's summary.json and run.json as the tables need them.
struct PointResult {
  nlohmann::json summary;  ///< an object with a "jobs" array
  nlohmann::json run;      ///< an object
};

/// Reads `dir`/summary.json and `dir`/run.json. Throws TraceError naming the file: missing,
/// unreadable, not JSON (e.g. cut short) or not of that shape.
[[nodiscard]] PointResult read_point_result(const std::filesystem::path& dir);

/// Reads every point's summary.json and run.json under `out_root`/<label> and writes
/// `out_root`/summary.csv and summary_run.csv (each to a temporary name, then renamed). Throws
/// UsageError listing the points without a complete result, TraceError naming a point's file
/// that cannot be read (read_point_result); nothing is written then. Whether the results are
/// up to date is the caller's to check first (sweep_plan.hpp).
void collect_sweep(const SweepFile& sweep, const std::filesystem::path& out_root);

}  // namespace gpumux::cli
