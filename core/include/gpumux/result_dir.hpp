// Results directories that never cost a user a file. gpumux writes a run into a temporary
// folder beside its final place, syncs every file, writes an ownership marker last and only
// then moves the folder under its final name. It replaces an earlier result only when that
// folder carries gpumux's marker, holds nothing but files gpumux wrote, and the caller allows
// it (`--force`, or a sweep re-running a stale point). Everything else is refused before the
// run starts, with an InputError (exit 2) naming the option or key and the path.
//
// Thread rules: a ResultWriter belongs to one thread; different writers (sweep points) may
// run concurrently on different directories.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
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

/// Writes one run's result folder. The constructor runs before the simulation: it checks the
/// target (check_result_target), creates the parents, cleans stale temporaries and creates the
/// temporary folder, so an unwritable place fails before anything runs (exit 2). Files are then
/// written into the temporary folder; commit() syncs, writes the marker and renames. A writer
/// destroyed without commit() removes its temporary folder.
class ResultWriter {
 public:
  ResultWriter(std::filesystem::path abs_dir, std::filesystem::path repo_root, std::string origin,
               bool replace);
  ~ResultWriter();
  ResultWriter(const ResultWriter&) = delete;
  ResultWriter& operator=(const ResultWriter&) = delete;

  [[nodiscard]] const std::filesystem::path& final_dir() const noexcept { return dir_; }
  [[nodiscard]] const std::filesystem::path& temporary_dir() const noexcept { return tmp_; }

  /// Writes `name` (a plain file name) through `fill`, then flushes and fsyncs it. A write
  /// error (full disk, file too large, I/O error) throws gpumux::Error naming the file, the
  /// system's reason and `origin`.
  void write(const std::string& name, const std::function<void(std::ostream&)>& fill);
  void write(const std::string& name, std::string_view content);

  /// Writes the marker (with `identity` merged in, e.g. the config fingerprint) last, syncs the
  /// folder and moves it under its final name, replacing an earlier gpumux result if allowed.
  void commit(const nlohmann::json& identity);

 private:
  std::filesystem::path dir_;
  std::filesystem::path repo_root_;
  std::filesystem::path tmp_;
  std::string origin_;
  bool replace_;
  bool committed_ = false;
  int lock_fd_ = -1;  ///< the partial marker, open and flock()ed while the writer lives
  std::vector<std::string> files_;
};

}  // namespace gpumux
