// What one sweep invocation finds for each point before anything runs: the point's config
// (the base config with the sweep's settings, --set and the point's own settings) and whether
// its folder holds an up-to-date result, i.e. this point's result with the same fingerprint
// (run_fingerprint.hpp) and tables that --collect can read, or why not. A resume re-runs what
// is not up to date; --collect refuses unless every point is. One code path for both, so a
// table never holds a point that a resume would re-run. Main thread (reads the point folders).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "gpumux/io/config.hpp"
#include "sweep_file.hpp"

namespace gpumux::cli {

/// Where a sweep's points go, and what the command line adds to each.
struct SweepSetup {
  std::filesystem::path root;              ///< the data folder (repository root or install)
  std::filesystem::path out_abs;           ///< the sweep's folder, absolute
  bool out_from_cwd = false;               ///< point folders as absolute paths (else root-relative)
  std::string origin;                      ///< where the sweep's folder came from, for messages
  std::vector<std::string> cli_overrides;  ///< the command line's --set
};

struct PointPlan {
  std::string label;
  ExperimentConfig config;
  bool has_result = false;  ///< the folder holds a gpumux result (a re-run replaces it)
  bool up_to_date = false;  ///< that result is this point's, with the same fingerprint, readable
  std::string other_owner;  ///< the result's owner when it is another run's or sweep's
  std::string why;          ///< when not up to date: what a re-run is for, e.g. "no result yet",
                            ///< "inputs changed since it ran (settings: seed)", a file's problem
};

/// Loads and checks point `index` of `sweep` (ConfigError, TraceError, UsageError: bad input,
/// nothing has run) and looks at its folder. A folder holding anything but a gpumux result
/// is refused (UsageError), as for any run.
[[nodiscard]] PointPlan plan_point(const SweepFile& sweep, std::size_t index,
                                   const SweepSetup& setup);

/// Throws UsageError unless every plan is up to date, naming the points that are not and why,
/// grouped by reason ("2 of 4 points ... no result yet: a, b; ...").
void require_up_to_date(const SweepFile& sweep, const std::vector<PointPlan>& plans,
                        const std::filesystem::path& out_abs);

}  // namespace gpumux::cli
