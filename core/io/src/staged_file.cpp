// Staging a file under no name, or under a fresh hidden one (staged_file.hpp).
#include "gpumux/io/staged_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "gpumux/api/errors.hpp"

namespace gpumux {
namespace {

// Fresh names to try before giving up (each a 1 in 62^6 chance of meeting an existing one).
constexpr int kNameTries = 100;

std::string proc_fd_path(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

// `.<name>.gpumux-import.<pid>.<6 letters>`: hidden, told apart from the user's files, and
// within NAME_MAX (255 bytes) however long `name` is.
std::string hidden_candidate(const std::string& name) {
  static constexpr char kLetters[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::random_device rd;
  // Built in steps: GCC 12 warns (-Wrestrict) on "." + string.
  std::string out(1, '.');
  out.append(name, 0, 200);
  out += ".gpumux-import.";
  out += std::to_string(::getpid());
  out += '.';
  for (int i = 0; i < 6; ++i) out += kLetters[rd() % (sizeof kLetters - 1)];
  return out;
}

}  // namespace

StagedFile::StagedFile(int dir_fd, std::string target_text, std::string name, Naming naming)
    : dir_fd_(dir_fd), target_text_(std::move(target_text)), name_(std::move(name)) {
  if (naming == Naming::Unnamed) {
    // No O_EXCL: with O_TMPFILE it would forbid the link that names the file in place().
    fd_ = ::openat(dir_fd_, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    // place() names it through /proc/self/fd (linkat(2)); without /proc, a hidden name.
    if (fd_ >= 0 && ::access(proc_fd_path(fd_).c_str(), F_OK) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
    // Otherwise (EOPNOTSUPP, EISDIR before Linux 3.11, ...) a hidden name, whose own
    // failure is the one reported.
  }
  if (fd_ < 0) {
    if (const int err = take_hidden_name(false); err != 0) {
      throw Error(target_text_ + ": cannot create a temporary file beside it (" +
                  std::strerror(err) + ")");
    }
  }
  struct stat st {};
  if (::fstat(fd_, &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
}

StagedFile::~StagedFile() {
  if (fd_ >= 0) ::close(fd_);
  // Only the name this object created, and only while it still names this file.
  struct stat st {};
  if (!hidden_.empty() && ::fstatat(dir_fd_, hidden_.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      st.st_dev == dev_ && st.st_ino == ino_) {
    ::unlinkat(dir_fd_, hidden_.c_str(), 0);
  }
}

int StagedFile::take_hidden_name(bool link_open_file) {
  for (int i = 0; i < kNameTries; ++i) {
    const std::string candidate = hidden_candidate(name_);
    int rc = 0;
    if (link_open_file) {
      rc = link_unnamed(candidate);  // an unnamed file's first name
    } else {
      // O_EXCL: never a file or link that was there; O_NOFOLLOW says so once more.
      fd_ = ::openat(dir_fd_, candidate.c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      rc = fd_ >= 0 ? 0 : errno;
    }
    if (rc == 0) {
      hidden_ = candidate;
      return 0;
    }
    if (rc != EEXIST) return rc;
  }
  return EEXIST;
}

int StagedFile::link_unnamed(const std::string& to) const {
  return ::linkat(AT_FDCWD, proc_fd_path(fd_).c_str(), dir_fd_, to.c_str(), AT_SYMLINK_FOLLOW) == 0
             ? 0
             : errno;
}

bool StagedFile::write(const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = ENOSPC;
      return false;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

int StagedFile::finish() {
  if (::fsync(fd_) != 0) return errno;
  if (hidden_.empty()) return 0;  // unnamed: open until place() links it
  const int fd = fd_;
  fd_ = -1;
  return ::close(fd) == 0 ? 0 : errno;
}

int StagedFile::place(bool replace) {
  const bool unnamed = hidden_.empty();
  if (!replace && unnamed) {
    if (const int err = link_unnamed(name_); err != 0) return err;
  } else if (!replace) {
    if (::renameat2(dir_fd_, hidden_.c_str(), dir_fd_, name_.c_str(), RENAME_NOREPLACE) != 0) {
      if (errno != EINVAL && errno != ENOSYS) return errno;
      // A file system without RENAME_NOREPLACE: a second name (refused if it exists), then
      // the hidden one goes.
      if (::linkat(dir_fd_, hidden_.c_str(), dir_fd_, name_.c_str(), 0) != 0) return errno;
      ::unlinkat(dir_fd_, hidden_.c_str(), 0);
    }
  } else {
    // rename(2) replaces the entry at the name, never what a link there points to; an
    // unnamed file first takes a hidden name to rename from.
    if (unnamed) {
      if (const int err = take_hidden_name(true); err != 0) return err;
    }
    if (::renameat(dir_fd_, hidden_.c_str(), dir_fd_, name_.c_str()) != 0) return errno;
  }
  hidden_.clear();
  if (fd_ >= 0) {
    ::close(fd_);  // synced by finish(): nothing left to report
    fd_ = -1;
  }
  return 0;
}

}  // namespace gpumux
