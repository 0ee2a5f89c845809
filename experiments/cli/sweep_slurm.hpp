// `gpumux sweep --slurm`: a Slurm job array that runs one point per task
// (`--point $SLURM_ARRAY_TASK_ID`) and a collect job that waits for the whole array
// (afterany: it runs even when a task failed, and then names the points without a result)
// and merges the points into the sweep's tables; `--submit` submits both with
// sbatch. Main thread.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sweep_file.hpp"

namespace gpumux::cli {

struct SlurmOptions {
  std::filesystem::path binary;        ///< this gpumux, absolute
  std::filesystem::path repo_root;     ///< exported as GPUMUX_ROOT to the tasks
  std::filesystem::path sweep_file;    ///< absolute
  std::filesystem::path out_root;      ///< the sweep's folder, absolute
  std::vector<std::string> overrides;  ///< the command line's --set, passed on
  std::vector<std::string> sbatch;     ///< extra "#SBATCH" options, e.g. "--partition=gpu"
  bool quick = false;
  bool force = false;
};

struct SlurmScripts {
  std::filesystem::path array;    ///< <out_root>/slurm/array.sbatch
  std::filesystem::path collect;  ///< <out_root>/slurm/collect.sbatch
};

/// POSIX shell single-quoting: 'it'\''s'.
[[nodiscard]] std::string shell_quote(const std::string& text);

/// Writes both scripts (and the log folder <out_root>/slurm/logs). Throws Error on a write
/// failure.
SlurmScripts write_slurm_scripts(const SweepFile& sweep, const SlurmOptions& options);

/// Submits the array, then the collect job with --dependency=afterany:<array id>; returns
/// the two job ids. Throws Error naming sbatch's output when it fails.
std::pair<std::string, std::string> submit_slurm(const SlurmScripts& scripts);

}  // namespace gpumux::cli
