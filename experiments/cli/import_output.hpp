// The two files of `gpumux trace import`, written so that a failure at any point leaves either
// the earlier pair or the new one (traces/importing.md, "What it writes"):
//  1. the CSV streams into OUT.tmp-import (hashed as it goes) and is fsynced;
//  2. the .SOURCE, naming that hash as data_sha256, goes to OUT.SOURCE.tmp-import, fsynced;
//  3. OUT.tmp-import is renamed to OUT, then OUT.SOURCE.tmp-import to OUT.SOURCE, and the
//     folder is fsynced.
// A full disk or any error in 1 or 2 removes both temporaries and leaves OUT and OUT.SOURCE as
// they were. The one window is between the two renames of 3 (a crash, or the second rename
// failing): OUT is new and OUT.SOURCE still the earlier one (none, for a first import). The
// .SOURCE's data_sha256 then does not match OUT, and the replay reader refuses the pair
// (trace_sidecar.hpp); without a .SOURCE, a later import refuses to replace OUT.
//
// Errors are gpumux::Error naming OUT and the system's reason (exit 1). Thread rules: one
// thread.
#pragma once

#include <filesystem>
#include <string>

#include "gpumux/byte_sink.hpp"
#include "gpumux/sha256.hpp"

namespace gpumux::cli {

class ImportOutput final : public ByteSink {
 public:
  /// Opens OUT.tmp-import for the CSV (replacing a temporary an earlier, killed import left).
  explicit ImportOutput(std::filesystem::path out);
  /// Removes the temporaries unless commit() succeeded.
  ~ImportOutput() override;
  ImportOutput(const ImportOutput&) = delete;
  ImportOutput& operator=(const ImportOutput&) = delete;

  /// The CSV's bytes.
  void write(const char* data, std::size_t n) override;
  /// Ends the CSV (fsync) and returns its SHA-256.
  std::string finish_data();
  /// Writes `sidecar` and renames both into place (steps 2 and 3 above).
  void commit(const std::string& sidecar);

 private:
  [[noreturn]] void fail(const std::string& what, int err) const;

  std::filesystem::path out_;
  std::filesystem::path data_tmp_;
  std::filesystem::path source_tmp_;
  int fd_ = -1;
  Sha256 hash_;
  bool committed_ = false;
};

}  // namespace gpumux::cli
