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
  std::vector<std::string> sbatch;  ///< extra "#SBATCH" options, one each, e.g. "--partition=gpu"
  bool quick = false;
  bool force = false;
  std::string out_origin = "--out";  ///< where out_root came from, for messages
  std::string name_origin = "name";  ///< where the sweep's name came from, for messages
};

/// The text of the two scripts.
struct SlurmScriptTexts {
  std::string array;    ///< one task per point: --point $SLURM_ARRAY_TASK_ID
  std::string collect;  ///< --collect
};

struct SlurmScripts {
  std::filesystem::path array;    ///< <out_root>/slurm/array.sbatch
  std::filesystem::path collect;  ///< <out_root>/slurm/collect.sbatch
};

/// Both scripts' text, every value quoted for the parser that reads it (script_quoting.hpp):
/// "#SBATCH" lines for sbatch, command lines for bash. Pure. Throws UsageError naming the
/// option (or the sweep file's key) for a value that cannot be written: see the checks in
/// script_quoting.hpp; an --sbatch value must be one option, starting with '-'.
[[nodiscard]] SlurmScriptTexts slurm_script_texts(const SweepFile& sweep,
                                                  const SlurmOptions& options);

/// Writes both scripts (and the log folder <out_root>/slurm/logs). Throws Error on a write
/// failure.
SlurmScripts write_slurm_scripts(const SlurmScriptTexts& texts,
                                 const std::filesystem::path& out_root);

/// Submits the array, then the collect job with --dependency=afterany:<array id>; returns
/// the two job ids. Throws Error naming sbatch's output when it fails.
std::pair<std::string, std::string> submit_slurm(const SlurmScripts& scripts);

}  // namespace gpumux::cli
