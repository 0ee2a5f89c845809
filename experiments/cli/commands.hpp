// The gpumux subcommands. Each returns a process exit code; errors propagate as exceptions
// that main() maps to exit codes (2: bad input, 1: failure at run time).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpumux::cli {

struct RunArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool out_given = false;  ///< --out was on the command line (an empty value is an error)
  bool force = false;      ///< replace an earlier gpumux result in the results folder
  bool quiet = false;
};
int run_command(const RunArgs& args);
int validate_command(const std::string& config, const std::vector<std::string>& overrides);
int list_command(const std::string& what, bool params = false);

struct SweepArgs {
  std::string sweep;
  unsigned jobs = 1;
  std::vector<std::string> overrides;
  bool force = false;                ///< re-run (and replace) points whose results are complete
  bool quick = false;                ///< apply the sweep file's "quick" section (smaller traces)
  std::string out_dir;               ///< overrides the sweep file's out_dir (relative: to the cwd)
  bool list_points = false;          ///< print the points (number, label, settings) and stop
  std::optional<std::size_t> point;  ///< run only this point (0-based, --list-points order)
  std::string shard;                 ///< "I/N": run points K with K % N == I
  bool collect = false;              ///< run nothing: merge the points into summary.csv
  bool slurm = false;                ///< write a Slurm array script (one task per point)
  bool submit = false;               ///< --slurm, then submit it with sbatch
  std::vector<std::string> sbatch;   ///< extra #SBATCH options for --slurm
};
int sweep_command(const SweepArgs& args);

struct CalibrateArgs {
  std::string device;
  std::string out;
  std::string base;
  std::vector<std::string> models;
  bool quick = false;
  bool force = false;  ///< replace an earlier calibrated profile at --out
};
int calibrate_command(const CalibrateArgs& args);
/// Refuses (UsageError) an --out that exists and is not a profile gpumux calibrate wrote, or is
/// one and `force` is not given. Runs before any GPU work.
void check_calibration_target(const std::filesystem::path& out, bool force);

/// Prints a one-line-per-run comparison table of summaries.
void print_table(const std::vector<std::pair<std::string, std::string>>& runs_and_summaries);

[[nodiscard]] std::filesystem::path repo_root();

}  // namespace gpumux::cli
