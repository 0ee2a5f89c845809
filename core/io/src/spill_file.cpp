// Unlinked temporary files for the import's sort (spill_file.hpp).
#include "spill_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "gpumux/api/errors.hpp"

namespace gpumux::trace_import {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{256} << 10;

}  // namespace

SpillFile::SpillFile(const std::filesystem::path& dir, std::string purpose, std::string file)
    : purpose_(std::move(purpose)), file_(std::move(file)), buffer_(new char[kBufferBytes]) {
  std::error_code ec;
  const std::filesystem::path folder = dir.empty() ? std::filesystem::temp_directory_path(ec) : dir;
  where_ = folder.empty() ? std::string(".") : folder.string();
  // O_TMPFILE (Linux 3.11+, where the file system has it: ext4, XFS, Btrfs, tmpfs): the file
  // never has a name, so nothing is left to clean up after a crash.
  fd_ = ::open(where_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd_ >= 0) return;
  // Elsewhere (EOPNOTSUPP, EISDIR before 3.11, ...): a fresh name, unlinked at once, so a
  // named .gpumux-import-XXXXXX exists only for that moment.
  std::string name = (std::filesystem::path(where_) / ".gpumux-import-XXXXXX").string();
  std::vector<char> path(name.begin(), name.end());
  path.push_back('\0');
  fd_ = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd_ < 0) fail("cannot create", errno);
  ::unlink(path.data());
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SpillFile::append(const char* data, std::size_t n) {
  if (n > kBufferBytes - used_) {
    flush();
    if (n >= kBufferBytes) {
      write_at_end(data, n);  // large: straight from `data`
      return;
    }
  }
  std::memcpy(buffer_.get() + used_, data, n);
  used_ += n;
}

void SpillFile::flush() {
  write_at_end(buffer_.get(), used_);
  used_ = 0;
}

void SpillFile::write_at_end(const char* data, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t w = ::pwrite(fd_, data + done, n - done, static_cast<off_t>(written_ + done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("cannot write", w < 0 ? errno : ENOSPC);
    done += static_cast<std::size_t>(w);
  }
  written_ += n;
}

std::size_t SpillFile::read_at(std::uint64_t offset, char* out, std::size_t n) {
  if (offset + n > written_) flush();
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail("cannot read", errno);
    if (r == 0) break;
    done += static_cast<std::size_t>(r);
  }
  return done;
}

void SpillFile::fail(const std::string& what, int err) const {
  throw Error(file_ + ": " + what + " a temporary file for " + purpose_ + " in " + where_ + ": " +
              std::strerror(err));
}

}  // namespace gpumux::trace_import
