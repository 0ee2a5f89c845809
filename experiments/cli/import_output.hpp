// The two files of `gpumux trace import`, written so that a failure at any point leaves either
// the earlier pair or the new one (traces/importing.md, "What it writes"):
//  1. the CSV streams into a staged file beside OUT (staged_file.hpp: no name at all where
//     the file system has O_TMPFILE, else a fresh hidden one), hashed as it goes, and synced;
//  2. the .SOURCE, naming that hash as data_sha256, is staged the same way and synced;
//  3. with the folder locked against other imports (flock), what may be replaced is checked
//     again (check_import_target: OUT may have appeared meanwhile), the CSV takes the name
//     OUT, then the .SOURCE the name OUT.SOURCE, and the folder is synced.
// A name that did not exist at that check is added without replacing (an entry that appears
// in between fails the import, exit 1); one that did is renamed onto, which replaces the
// entry and never writes through a link. Nothing is ever written at a name gpumux did not
// create. A full disk or any error in 1 or 2 leaves OUT and OUT.SOURCE as they were, and no
// temporary file. The one window is between the two steps of 3 (a crash, or the second one
// failing): OUT is new and OUT.SOURCE still the earlier one (none, for a first import). The
// .SOURCE's data_sha256 then does not match OUT, and the replay reader refuses the pair
// (trace_sidecar.hpp); without a .SOURCE, a later import refuses to replace OUT.
//
// Errors are gpumux::Error naming OUT and the system's reason (exit 1); the --force rule's
// refusals are UsageError (exit 2). Thread rules: one thread.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "gpumux/io/byte_sink.hpp"
#include "gpumux/io/sha256.hpp"
#include "gpumux/io/staged_file.hpp"

namespace gpumux::cli {

/// Which of OUT and OUT.SOURCE exist (and may be replaced).
struct ImportTarget {
  bool out_exists = false;
  bool source_exists = false;
};

/// The --force rule: refuses (UsageError) an OUT that names no file, anything at OUT or
/// OUT.SOURCE that is not a regular file, an existing pair whose .SOURCE does not begin with
/// the import's marker (gpumux did not write it), and an earlier import without `force`.
ImportTarget check_import_target(const std::filesystem::path& out, bool force);

class ImportOutput final : public ByteSink {
 public:
  /// Stages the CSV beside `out`, which check_import_target() allowed with `force`.
  ImportOutput(std::filesystem::path out, bool force);
  /// Closes the folder; what is still staged goes with its StagedFile.
  ~ImportOutput() override;
  ImportOutput(const ImportOutput&) = delete;
  ImportOutput& operator=(const ImportOutput&) = delete;

  /// The CSV's bytes.
  void write(const char* data, std::size_t n) override;
  /// Ends the CSV (fsync) and returns its SHA-256.
  std::string finish_data();
  /// Writes `sidecar` and gives both files their names (steps 2 and 3 above).
  void commit(const std::string& sidecar);

 private:
  [[noreturn]] void fail(const std::string& what, int err) const;

  std::filesystem::path out_;
  bool force_;
  int dir_fd_ = -1;
  std::optional<StagedFile> data_;
  Sha256 hash_;
};

}  // namespace gpumux::cli
