// Writing an import's CSV and .SOURCE as a pair (import_output.hpp).
#include "import_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gpumux/errors.hpp"
#include "gpumux/trace_sidecar.hpp"

namespace gpumux::cli {
namespace {

namespace fs = std::filesystem;

int open_for_writing(const fs::path& p) {
  return ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

// Writes all of `n` bytes; false (errno set) on failure.
bool write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
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

}  // namespace

ImportOutput::ImportOutput(fs::path out)
    : out_(std::move(out)),
      data_tmp_(out_.string() + ".tmp-import"),
      source_tmp_(import_sidecar_of(out_).string() + ".tmp-import") {
  fd_ = open_for_writing(data_tmp_);
  if (fd_ < 0) fail("cannot create " + data_tmp_.string(), errno);
}

ImportOutput::~ImportOutput() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) {
    std::error_code ec;
    fs::remove(data_tmp_, ec);
    fs::remove(source_tmp_, ec);
  }
}

void ImportOutput::write(const char* data, std::size_t n) {
  if (!write_all(fd_, data, n))
    fail("cannot write the imported trace; nothing was replaced", errno);
  hash_.update(std::string_view(data, n));
}

std::string ImportOutput::finish_data() {
  if (::fsync(fd_) != 0) fail("cannot write the imported trace; nothing was replaced", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot write the imported trace; nothing was replaced", errno);
  return hash_.hex();
}

void ImportOutput::commit(const std::string& sidecar) {
  const int fd = open_for_writing(source_tmp_);
  if (fd < 0) fail("cannot create " + source_tmp_.string(), errno);
  const bool written = write_all(fd, sidecar.data(), sidecar.size()) && ::fsync(fd) == 0;
  const int err = errno;
  if (::close(fd) != 0 || !written)
    fail("cannot write " + source_tmp_.string(), written ? errno : err);
  // The data first: a crash between the renames leaves a .SOURCE whose data_sha256 does not
  // match, never a .SOURCE beside data it does not describe without a way to tell.
  if (::rename(data_tmp_.c_str(), out_.c_str()) != 0)
    fail("cannot rename the imported trace", errno);
  committed_ = true;  // OUT is the new data now: its temporary is gone
  if (::rename(source_tmp_.c_str(), import_sidecar_of(out_).c_str()) != 0) {
    const int rename_err = errno;
    std::error_code ec;
    fs::remove(source_tmp_, ec);
    fail(
        "was replaced, but its .SOURCE could not be (the earlier one, if any, no longer "
        "matches it and replaying it is refused; import again)",
        rename_err);
  }
  const fs::path dir = out_.has_parent_path() ? out_.parent_path() : fs::path(".");
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);  // the renames survive a power loss; no folder fsync is not an error
    ::close(dfd);
  }
}

void ImportOutput::fail(const std::string& what, int err) const {
  throw Error(out_.string() + ": " + what + " (" + std::strerror(err) + ")");
}

}  // namespace gpumux::cli
