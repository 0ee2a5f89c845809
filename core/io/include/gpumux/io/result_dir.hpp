// Results directories that never cost a user a file: where one may go, and whose it is.
// gpumux replaces a folder only when it carries gpumux's marker, holds nothing but files gpumux
// wrote, and the caller allows it (`--force`, or a sweep re-running a stale point of its own).
// Everything else is refused before the run starts, with an InputError (exit 2) naming the
// option or key and the path. Writing a folder: result_writer.hpp.
//
// Thread rules: free functions; safe to call from several threads on different folders.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumux {

/// The marker gpumux writes last into every result folder (a JSON object, see marker()).
inline constexpr std::string_view kResultMarkerFile = ".gpumux-result.json";
/// Written first into a temporary folder: it is gpumux's, and may be cleaned up once its
/// process is gone.
inline constexpr std::string_view kPartialMarkerFile = ".gpumux-partial";

/// True for a name that may become one path component of a results folder (an experiment's
/// name, a sweep's name, a sweep point's label): letters, digits, '_', '-' and '.', not
/// starting with '.', at most 128 bytes (the temporary folder's name adds up to ~110 more and
/// must stay under the 255-byte limit). So never "", ".", ".." or anything with a '/'.
[[nodiscard]] bool is_safe_result_name(std::string_view name);
/// What `gpumux sweep` writes in a sweep's folder beside the point folders: its tables
/// summary.csv and summary_run.csv (docs/outputs.md), and the slurm/ folder of --slurm.
[[nodiscard]] inline bool is_sweep_own_file(std::string_view name) {
  return name == "summary.csv" || name == "summary_run.csv" || name == "slurm";
}
/// The rule above in words, for messages: "'x' must be " + kSafeResultNameRule.
inline constexpr std::string_view kSafeResultNameRule =
    "letters, digits, '_', '-' or '.', not start with '.', at most 128 characters";

/// What is at a path where results should go.
enum class ResultDirState {
  Absent,         ///< nothing there: the run creates it
  EmptyDir,       ///< an empty folder: the run may take its place
  GpumuxResult,   ///< a folder gpumux wrote (marker present, only gpumux's files)
  Foreign,        ///< a folder with files gpumux did not write, or without a marker
  NotADirectory,  ///< a file, a device, a socket...
};

struct ResultDirInfo {
  ResultDirState state = ResultDirState::Absent;
  std::optional<nlohmann::json> marker;  ///< set for GpumuxResult
  std::vector<std::string> foreign;      ///< entries gpumux did not write (first few)
};

/// Looks at `dir` without changing anything.
[[nodiscard]] ResultDirInfo inspect_result_dir(const std::filesystem::path& dir);

/// The absolute, lexically normal form of `dir` (relative paths against `base`).
[[nodiscard]] std::filesystem::path normal_result_path(const std::filesystem::path& dir,
                                                       const std::filesystem::path& base);

/// Refuses, with UsageError naming `origin` (e.g. "--out" or "sweep.json: out_dir") and the
/// path, a results path that is the repository root or one of its ancestors, lies inside one of
/// the repository's source folders (traces/, core/, ...), or contains the current directory.
void check_result_path(const std::filesystem::path& abs_dir, const std::filesystem::path& repo_root,
                       const std::string& origin);

/// Checks that a run may write `abs_dir`: path rules above, then its state. An existing gpumux
/// result is accepted only when `replace`; a foreign folder or a file never. Throws UsageError.
void check_result_target(const std::filesystem::path& abs_dir,
                         const std::filesystem::path& repo_root, const std::string& origin,
                         bool replace);

/// Removes temporary result folders beside `abs_dir` left by processes of this host that no
/// longer exist: only folders whose partial marker is not locked by a live writer (flock) and
/// whose pid is gone, and only the files that marker lists. An earlier result set aside by an
/// unfinished replace is put back if its place is empty. Returns how many folders were removed.
std::size_t remove_stale_temporaries(const std::filesystem::path& abs_dir);

/// What reclaim_dead_temporaries did with one dead writer's folder.
struct ReclaimedFolder {
  std::filesystem::path path;
  std::uint64_t bytes = 0;  ///< of gpumux's files removed
  long pid = 0;             ///< the writer's, from the folder's name
  bool kept = false;        ///< the folder stays: it holds files gpumux did not write
  bool restored = false;    ///< an earlier result set aside, put back under its name
};

/// How far below the results root reclaim_dead_temporaries looks: temporary folders in the
/// root itself (runs) and in its folders (sweep points, beside their point folders).
inline constexpr int kReclaimDepth = 2;
/// At most this many folder entries are looked at, so a start never stalls on a huge tree.
inline constexpr std::size_t kReclaimMaxEntries = 200000;

/// The folder a run or sweep writing `abs_dir` scans for dead writers' folders: the data
/// root's results/ when `abs_dir` lies inside it, else `abs_dir`'s parent.
[[nodiscard]] std::filesystem::path results_root_of(const std::filesystem::path& abs_dir,
                                                    const std::filesystem::path& repo_root);

/// Reclaims the temporary folders of dead writers anywhere under `root` (kReclaimDepth levels,
/// kReclaimMaxEntries entries; hidden folders and symbolic links are not entered): the folders
/// named as gpumux names its temporaries (".<name>.gpumux-tmp.<pid>.<serial>.<host>") by a
/// process of this host, holding gpumux's partial marker, whose writer's lock (flock on that
/// marker, released by the kernel when the writer dies, even by kill -9) can be taken and
/// whose pid is gone. Only the files the marker lists are removed. Folders without the marker,
/// of another host, or of a live writer are left alone. Returns what it did, in scan order.
std::vector<ReclaimedFolder> reclaim_dead_temporaries(const std::filesystem::path& root);

/// One line for the user: "removed <path> (1.2 GiB), the temporary folder of a run that ended
/// without finishing (pid 4242)", or what else was done.
[[nodiscard]] std::string describe(const ReclaimedFolder& r);

}  // namespace gpumux
