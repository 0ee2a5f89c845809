// Writing one run's result folder so that it appears under its final name only when complete:
// a temporary folder beside the target, every file synced, the ownership marker last, then one
// rename (or one atomic exchange with an earlier gpumux result). See result_dir.hpp for the
// rules on where results may go and what may be replaced.
//
// Thread rules: a ResultWriter belongs to one thread; different writers (sweep points) may
// run concurrently on different folders.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/io/byte_sink.hpp"
#include "gpumux/io/output_budget.hpp"
#include "gpumux/io/result_dir.hpp"

namespace gpumux {

/// Writes one run's result folder. The constructor runs before the simulation: it checks the
/// target (check_result_target), creates the parents, cleans stale temporaries and creates the
/// temporary folder, so an unwritable place fails before anything runs (exit 2). Files are then
/// written into the temporary folder; commit() syncs, writes the marker and renames. A writer
/// destroyed without commit() removes its temporary folder.
///
/// Every byte written (streams, files, the marker) is charged to the writer's OutputBudget
/// before it reaches the disk (output_budget.hpp): `max_output_bytes` when given, else the
/// default for the free space of the results file system. A write past it throws
/// OutputBudgetExceeded naming the file; nothing appears under the final name.
class ResultWriter {
 public:
  ResultWriter(std::filesystem::path abs_dir, std::filesystem::path repo_root, std::string origin,
               bool replace, std::optional<std::uint64_t> max_output_bytes = std::nullopt);
  ~ResultWriter();
  ResultWriter(const ResultWriter&) = delete;
  ResultWriter& operator=(const ResultWriter&) = delete;

  [[nodiscard]] const std::filesystem::path& final_dir() const noexcept { return dir_; }
  [[nodiscard]] const std::filesystem::path& temporary_dir() const noexcept { return tmp_; }
  /// The run's output budget: what may still be written, and where the limit came from.
  [[nodiscard]] const OutputBudget& budget() const noexcept { return budget_; }

  /// Writes `name` (a plain file name) through `fill`, then flushes and fsyncs it. A write
  /// error (full disk, file too large, I/O error) throws gpumux::Error naming the file, the
  /// system's reason and `origin`.
  void write(const std::string& name, const std::function<void(std::ostream&)>& fill);
  void write(const std::string& name, std::string_view content);

  /// Opens `name` (a plain file name) for writing while the run goes (events.jsonl and
  /// trace.json stream as events happen). The sink passes each chunk it is given to write(2)
  /// and throws gpumux::Error naming the file, the system's reason and `origin` on a write
  /// error; commit() syncs and closes it before the marker. Without commit() it is removed
  /// with the temporary folder, so nothing appears under the final name. The sink lives as
  /// long as the writer.
  ByteSink& open_stream(const std::string& name);

  /// Writes the marker (with `identity` merged in, e.g. the config fingerprint) last, syncs the
  /// folder and moves it under its final name, replacing an earlier gpumux result if allowed.
  void commit(const nlohmann::json& identity);

 private:
  std::filesystem::path dir_;
  std::filesystem::path repo_root_;
  std::filesystem::path tmp_;
  std::string origin_;
  bool replace_;
  OutputBudget budget_;
  bool committed_ = false;
  int lock_fd_ = -1;  ///< the partial marker, open and flock()ed while the writer lives
  std::vector<std::string> files_;
  class StreamFile;
  std::vector<std::unique_ptr<StreamFile>> streams_;

  int create_file(const std::string& name);  ///< records the name, opens it; an fd
  [[noreturn]] void fail_file(const std::string& name, int err) const;
};

}  // namespace gpumux
