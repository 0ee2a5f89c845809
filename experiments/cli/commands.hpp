// The gpumux subcommands. Each returns a process exit code; errors propagate as exceptions
// that main() maps to exit codes (2: bad input, 1: failure at run time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gpumux/io/data_root.hpp"
#include "gpumux/io/trace_import.hpp"

namespace gpumux {
struct ExperimentConfig;
}

namespace gpumux::cli {

struct RunArgs {
  std::string config;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool out_given = false;  ///< --out was on the command line (an empty value is an error)
  bool force = false;      ///< replace an earlier gpumux result in the results folder
  bool quiet = false;
  bool strict = false;  ///< arrival warnings (arrival_check.hpp) are errors, exit 2
};
int run_command(const RunArgs& args);
/// Prints the arrival report of `config` to stderr (the per-service lines unless `quiet`, the
/// warnings always); under `strict` a warning throws UsageError (exit 2) before the run.
void report_arrivals(const ExperimentConfig& config, bool quiet, bool strict);
/// The text report_arrivals prints (config warnings, per-service lines unless `quiet`,
/// arrival warnings); the count of arrival warnings goes to `arrival_warnings` when not null.
[[nodiscard]] std::string arrival_report_text(const ExperimentConfig& config, bool quiet,
                                              std::size_t* arrival_warnings = nullptr);
int validate_command(const std::string& config, const std::vector<std::string>& overrides,
                     bool strict = false);
/// `what` empty: the categories, one per line with what each lists.
int list_command(const std::string& what, bool params = false);
/// The --version text: version, git revision, build type, whether CUDA was built.
[[nodiscard]] std::string version_text();

struct SweepArgs {
  std::string sweep;
  unsigned jobs = 1;
  std::vector<std::string> overrides;
  bool force = false;                ///< re-run (and replace) points whose results are complete
  bool quick = false;                ///< apply the sweep file's "quick" section (smaller traces)
  std::string out_dir;               ///< overrides the sweep file's out_dir (relative: to the cwd)
  bool list_points = false;          ///< print the points (number, label, settings) and stop
  std::optional<std::string> point;  ///< --point K as given: run only point K (0-based)
  std::optional<std::string> shard;  ///< --shard I/N as given: run points K with K % N == I
  bool collect = false;              ///< run nothing: merge the points into summary.csv
  bool slurm = false;                ///< write a Slurm array script (one task per point)
  bool submit = false;               ///< --slurm, then submit it with sbatch
  std::vector<std::string> sbatch;   ///< extra #SBATCH options for --slurm
  bool quiet = false;                ///< no arrival lines (warnings stay), no progress line
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

struct TraceImportArgs {
  std::string input;
  std::string out;
  std::string preset;
  std::optional<trace_import::Format> format;  ///< unset: the preset's, else by extension
  std::string time_column;
  std::optional<trace_import::TimeUnit> unit;
  std::optional<trace_import::Origin> origin;
  bool sort = false;
  bool gaps = false;  ///< the time column holds inter-arrival gaps
  std::string keep;   ///< comma-separated columns to keep ("" = all, or the preset's)
  bool no_extra = false;
  std::vector<std::string> rename;  ///< FROM=TO
  std::vector<std::string> where;   ///< COLUMN=VALUE
  std::optional<int> decimals;
  std::string licence;
  std::uint64_t seed = 1;
  trace_import::Spread spread = trace_import::Spread::Uniform;
  bool force = false;
  bool quiet = false;
  std::string command;  ///< the command line, recorded in the sidecar
};
int trace_import_command(const TraceImportArgs& args);
/// `argv` joined into one shell-safe line (single quotes where needed).
[[nodiscard]] std::string shell_command(const std::vector<std::string>& argv);

/// Prints a one-line-per-run comparison table of summaries.
void print_table(const std::vector<std::pair<std::string, std::string>>& runs_and_summaries);

[[nodiscard]] std::filesystem::path repo_root();
/// The data folder and whether it is an install (data_root.hpp), from the current directory.
[[nodiscard]] DataRoot data_root();
/// With installed data, a relative out_dir resolves against the current directory (never
/// inside <prefix>/share/gpumux); in a checkout it stays relative to the checkout.
void anchor_out_dir(ExperimentConfig& config, const DataRoot& root);
/// Progress lines (sweep ETA, run heartbeat) are for a person: stderr is a terminal, no -q.
[[nodiscard]] bool progress_wanted(bool quiet);
/// Reclaims dead writers' temporary folders under `results_root` (reclaim_dead_temporaries),
/// printing one line per folder to stderr unless `quiet`.
void reclaim_dead_writers(const std::filesystem::path& results_root, bool quiet);

}  // namespace gpumux::cli
