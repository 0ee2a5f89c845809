// Writing one result folder: into a temporary folder beside the target, every file synced,
// the marker last, then moved into place (see result_writer.hpp).
#include "gpumux/io/result_writer.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_EXCHANGE (glibc >= 2.28)
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <iostream>
#include <ostream>
#include <streambuf>
#include <system_error>

#include "gpumux/api/errors.hpp"
#include "result_dir_internal.hpp"

namespace gpumux {

namespace fs = std::filesystem;
using namespace result_dir_detail;

namespace {

// A streambuf writing to a file descriptor that remembers the first error's errno, so a full
// disk is reported as "No space left on device" and never ignored. Each chunk is charged to
// `budget` before it is written; one that does not fit stops the writing (over_budget()): an
// exception thrown here would be swallowed by the ostream.
class FdWriteBuf final : public std::streambuf {
 public:
  FdWriteBuf(int fd, OutputBudget& budget) : fd_(fd), budget_(budget) {
    setp(buf_.data(), buf_.data() + buf_.size());
  }
  int error() const noexcept { return error_; }
  bool over_budget() const noexcept { return over_budget_; }
  int flush_all() {
    drain();
    return error_;
  }

 protected:
  int_type overflow(int_type ch) override {
    drain();
    if (error_ != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override {
    drain();
    return error_ == 0 ? 0 : -1;
  }

 private:
  void drain() {
    const char* p = pbase();
    std::size_t left = static_cast<std::size_t>(pptr() - pbase());
    if (left > 0 && error_ == 0 && !budget_.take(left)) {
      over_budget_ = true;
      error_ = EFBIG;  // stops further writes; reported as the budget, not as this errno
    }
    while (left > 0 && error_ == 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        error_ = errno;
        break;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    setp(buf_.data(), buf_.data() + buf_.size());
  }

  int fd_;
  OutputBudget& budget_;
  int error_ = 0;
  bool over_budget_ = false;
  std::array<char, 1 << 16> buf_{};
};

}  // namespace

// A result file written during the run: chunks go straight to write(2) (the event writers
// buffer), the first error is thrown at once naming the file.
class ResultWriter::StreamFile final : public ByteSink {
 public:
  StreamFile(ResultWriter& owner, std::string name, int fd)
      : owner_(owner), name_(std::move(name)), fd_(fd) {}
  ~StreamFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  StreamFile(const StreamFile&) = delete;
  StreamFile& operator=(const StreamFile&) = delete;

  void write(const char* data, std::size_t n) override {
    if (fd_ < 0) throw std::logic_error("ResultWriter: stream " + name_ + " written after commit");
    owner_.budget_.charge(n, name_, owner_.dir_);  // before the bytes reach the disk
    while (n > 0) {
      const ssize_t w = ::write(fd_, data, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        owner_.fail_file(name_, errno);
      }
      data += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  /// Syncs and closes the file (at commit).
  void close() {
    int err = ::fsync(fd_) != 0 ? errno : 0;
    if (::close(fd_) != 0 && err == 0) err = errno;
    fd_ = -1;
    if (err != 0) owner_.fail_file(name_, err);
  }

 private:
  ResultWriter& owner_;
  std::string name_;
  int fd_;
};

ResultWriter::ResultWriter(fs::path abs_dir, fs::path repo_root, std::string origin, bool replace,
                           std::optional<std::uint64_t> max_output_bytes)
    : dir_(std::move(abs_dir)),
      repo_root_(std::move(repo_root)),
      origin_(std::move(origin)),
      replace_(replace),
      budget_(OutputBudget::for_results(dir_, max_output_bytes)) {
  check_result_target(dir_, repo_root_, origin_, replace_);
  std::error_code ec;
  fs::create_directories(dir_.parent_path(), ec);
  if (ec) refuse(origin_, dir_.parent_path(), "cannot create the folder: " + ec.message());
  remove_stale_temporaries(dir_);
  const fs::path tmp = sibling(dir_, kTmpTag);
  if (!fs::create_directory(tmp, ec) || ec) {
    refuse(origin_, dir_,
           "cannot create a folder beside it (" + tmp.filename().string() +
               "): " + (ec ? ec.message() : std::string("it already exists")));
  }
  // The partial marker, locked for as long as this writer lives: cleanup skips locked folders.
  lock_fd_ = ::open((tmp / kPartialMarkerFile).c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
    fs::remove(tmp / kPartialMarkerFile, ec);
    fs::remove(tmp, ec);
    refuse(origin_, dir_, "cannot write into " + tmp.string() + ": " + reason(err));
  }
  tmp_ = tmp;
}

ResultWriter::~ResultWriter() {
  if (!committed_ && !tmp_.empty()) {
    remove_owned(tmp_, std::set<std::string>(files_.begin(), files_.end()));
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void ResultWriter::write(const std::string& name, std::string_view content) {
  write(name, [content](std::ostream& out) {
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  });
}

void ResultWriter::fail_file(const std::string& name, int err) const {
  throw Error("cannot write results: " + name + " of " + dir_.string() + " (" + origin_ +
              "): " + reason(err) + "; nothing was written under that name");
}

int ResultWriter::create_file(const std::string& name) {
  if (committed_) throw std::logic_error("ResultWriter: write after commit");
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') {
    throw std::logic_error("ResultWriter::write: bad file name '" + name + "'");
  }
  {
    // Record the name first, so a killed run's leftovers can be cleaned up file by file.
    const std::string line = name + "\n";
    budget_.charge(line.size(), kPartialMarkerFile, dir_);
    if (::write(lock_fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      fail_file(name, errno != 0 ? errno : EIO);
    }
  }
  files_.push_back(name);
  const fs::path file = tmp_ / name;
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) fail_file(name, errno);
  return fd;
}

void ResultWriter::write(const std::string& name, const std::function<void(std::ostream&)>& fill) {
  const int fd = create_file(name);
  FdWriteBuf buf(fd, budget_);
  std::ostream out(&buf);
  try {
    fill(out);
  } catch (...) {
    ::close(fd);
    throw;
  }
  int err = buf.flush_all();
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (buf.over_budget()) budget_.fail(name, dir_);
  if (err != 0) fail_file(name, err);
}

ByteSink& ResultWriter::open_stream(const std::string& name) {
  const int fd = create_file(name);
  streams_.push_back(std::make_unique<StreamFile>(*this, name, fd));
  return *streams_.back();
}

void ResultWriter::commit(const nlohmann::json& identity) {
  auto failure = [&](const std::string& what) {
    return Error("cannot write results: " + what + " (" + origin_ + " " + dir_.string() +
                 "); nothing was written under that name");
  };
  // Streamed files are complete now (their writers flushed them): sync and close them.
  for (auto& stream : streams_) stream->close();
  nlohmann::json marker = identity;
  marker["gpumux_result"] = 1;
  marker["files"] = files_;
  // The marker is the last file: its presence in a folder under the final name means the
  // folder is complete. Written directly (not via write()) so files_ does not list it.
  {
    const fs::path file = tmp_ / kResultMarkerFile;
    const std::string text = marker.dump(2) + "\n";
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    int err = fd < 0 ? errno : 0;
    if (err == 0) {
      FdWriteBuf buf(fd, budget_);
      std::ostream out(&buf);
      out << text;
      err = buf.flush_all();
      if (err == 0 && ::fsync(fd) != 0) err = errno;
      if (::close(fd) != 0 && err == 0) err = errno;
      if (buf.over_budget()) budget_.fail(kResultMarkerFile, dir_);
    }
    if (err != 0) throw failure(std::string(kResultMarkerFile) + ": " + reason(err));
  }
  fsync_path(tmp_, O_RDONLY | O_DIRECTORY);

  // Look again: the target may have changed while the run was going.
  const ResultDirInfo now = inspect_result_dir(dir_);
  const bool replacing = now.state == ResultDirState::GpumuxResult && replace_;
  if (!replacing && now.state != ResultDirState::Absent && now.state != ResultDirState::EmptyDir) {
    throw Error(origin_ + ": " + dir_.string() +
                ": something else appeared there during the run; gpumux will not replace it");
  }
  std::error_code ec;
  fs::path old;  // where the earlier result is after the swap
  if (replacing) {
    // One atomic exchange: at every instant one complete result is under the final name.
    if (::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) == 0) {
      old = tmp_;
    } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) {
      // File systems without RENAME_EXCHANGE: set the earlier result aside (cleanup restores
      // it if we die before the next rename), then move the new one in.
      old = sibling(dir_, kOldTag);
      fs::rename(dir_, old, ec);
      if (ec) throw failure("cannot move the earlier result aside: " + ec.message());
      fs::rename(tmp_, dir_, ec);
      if (ec) {
        std::error_code back;
        fs::rename(old, dir_, back);
        throw failure("cannot move the results into place: " + ec.message());
      }
    } else {
      throw failure("cannot exchange with the earlier result: " + reason(errno));
    }
  } else {
    fs::rename(tmp_, dir_, ec);
    if (ec) throw failure("cannot move the results into place: " + ec.message());
  }
  committed_ = true;
  // The folder is complete under its final name: drop the partial marker (a leftover one is
  // recognised as gpumux's by inspect_result_dir) and release the lock.
  fs::remove(dir_ / kPartialMarkerFile, ec);
  ::close(lock_fd_);
  lock_fd_ = -1;
  fsync_path(dir_.parent_path(), O_RDONLY | O_DIRECTORY);
  if (!old.empty()) {
    const auto old_marker = read_marker(old / kResultMarkerFile);
    if (!remove_owned(old, old_marker ? listed_files(*old_marker) : std::set<std::string>{})) {
      std::cerr << "warning: " << old.string()
                << " holds files gpumux did not write (added to the earlier result during the "
                   "run); they were kept there\n";
    }
  }
}

}  // namespace gpumux
