// A file written in a folder under no name that anyone else holds, then given its final name
// in one step: how `gpumux trace import` stages OUT and OUT.SOURCE (import_output.hpp).
//
// Where the folder's file system has O_TMPFILE (Linux 3.11+; ext4, XFS, Btrfs, tmpfs), the
// file has no name at all until place(), so a process killed while writing leaves nothing.
// Elsewhere it is created under a fresh hidden name, `.<name>.gpumux-import.<pid>.<random>`,
// with O_CREAT | O_EXCL | O_NOFOLLOW: never a file, or a link, that was there before; it is
// removed unless placed. place() never writes through a link: it either adds the final name
// (refused when the name exists) or renames onto it (which replaces the entry itself).
//
// Thread rules: one thread per object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpumux {

class StagedFile {
 public:
  enum class Naming {
    Unnamed,  // O_TMPFILE where the folder has it, else a hidden name
    Hidden,   // always a hidden name (the fallback, chosen by tests)
  };

  /// Creates the file (mode 0644 less the umask) in the folder open as `dir_fd`, which must
  /// outlive this object, to become `name` (one path component) there. Throws gpumux::Error
  /// naming `target_text` (the final path, for messages) and the system's reason.
  StagedFile(int dir_fd, std::string target_text, std::string name,
             Naming naming = Naming::Unnamed);
  /// Closes the file and removes its hidden name unless place() gave it the final one.
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  /// Appends all of `n` bytes; false (errno set) on failure.
  bool write(const char* data, std::size_t n);
  /// Syncs the file (and closes it when it has a name); 0, or the errno of the failure.
  int finish();
  /// Gives the (closed) file its final name: without `replace`, fails with EEXIST when the
  /// name exists; with it, replaces the entry there (a file, or a link, never its target).
  /// 0, or the errno of the failure (the file is then still staged).
  int place(bool replace);

  /// The hidden name while there is one ("" for an unnamed file or once placed).
  [[nodiscard]] const std::string& hidden_name() const noexcept { return hidden_; }

 private:
  int link_unnamed(const std::string& to) const;
  int take_hidden_name(bool link_open_file);

  int dir_fd_;
  std::string target_text_;
  std::string name_;
  int fd_ = -1;
  std::string hidden_;  // the name this object created, "" when none (yet, or any more)
  std::uint64_t dev_ = 0, ino_ = 0;  // the file's identity: its hidden name is removed only
                                     // while the name still holds it
};

}  // namespace gpumux
