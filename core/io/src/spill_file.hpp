// A temporary file for what `gpumux trace import` cannot hold in memory (sorted runs of
// arrival times, kept columns waiting to be written): created in a folder without a name
// (O_TMPFILE; where the file system lacks it, named and unlinked at once), so its space
// returns to the disk when the file is closed, even if the process is killed. Internal to core.
//
// Errors (a full disk, a folder that cannot hold files) are gpumux::Error naming the folder
// and the purpose. Thread rules: one thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace gpumux::trace_import {

class SpillFile {
 public:
  /// Creates the file in `dir` (the system's temporary folder when empty); `purpose` and
  /// `file` (the trace) name it in messages.
  SpillFile(const std::filesystem::path& dir, std::string purpose, std::string file);
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  /// Appends `n` bytes at the end (buffered).
  void append(const char* data, std::size_t n);
  /// Reads `n` bytes at `offset` (which must be below size()) into `out`; returns how many
  /// were there (fewer only at the end).
  std::size_t read_at(std::uint64_t offset, char* out, std::size_t n);
  /// Bytes appended so far.
  [[nodiscard]] std::uint64_t size() const noexcept { return written_ + used_; }

 private:
  void flush();
  void write_at_end(const char* data, std::size_t n);
  [[noreturn]] void fail(const std::string& what, int err) const;

  int fd_ = -1;
  std::string where_;  // the folder, for messages
  std::string purpose_;
  std::string file_;
  std::unique_ptr<char[]> buffer_;
  std::size_t used_ = 0;
  std::uint64_t written_ = 0;
};

}  // namespace gpumux::trace_import
