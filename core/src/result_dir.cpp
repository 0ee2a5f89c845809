// Result folders: where they may go, whose they are, and how one is written so that it exists
// under its final name only when complete (see result_dir.hpp).
#include "gpumux/result_dir.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>  // renameat2, RENAME_EXCHANGE (glibc >= 2.28)
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <streambuf>
#include <system_error>

#include "gpumux/errors.hpp"

namespace gpumux {

namespace fs = std::filesystem;

namespace {

// The repository's own folders: results never go inside them (out_dir "traces" would
// otherwise replace the inputs). results/ and build folders are not listed.
constexpr std::array<std::string_view, 13> kSourceFolders = {
    "traces", "core", "sim",   "backend", "policies", "experiments", "plots",
    "tests",  "docs", "cmake", ".ci",     ".git",     "shared"};

constexpr std::string_view kTmpTag = ".gpumux-tmp.";
constexpr std::string_view kOldTag = ".gpumux-old.";

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  std::string h(buf);
  // Keep the name usable inside a file name.
  for (char& c : h) {
    if (c == '/' || c == '\0') c = '_';
  }
  return h.empty() ? "localhost" : h;
}

bool process_alive(long pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

std::string reason(int err) {
  return std::strerror(err);
}

// ".<name><tag><pid>.<serial>.<host>": a temporary (or set-aside) folder beside `dir`, named
// so that only this host's dead processes' folders are ever cleaned up.
std::atomic<unsigned> g_writer_serial{0};

fs::path sibling(const fs::path& dir, std::string_view tag) {
  std::string name(1, '.');
  name += dir.filename().string();
  name += tag;
  name += std::to_string(::getpid());
  name += '.';
  name += std::to_string(g_writer_serial++);
  name += '.';
  name += host_name();
  return dir.parent_path() / name;
}

[[noreturn]] void refuse(const std::string& origin, const fs::path& path, const std::string& why) {
  throw UsageError(origin + ": " + path.string() + ": " + why);
}

// True when `inner` is `outer` or lies below it (both absolute and normal).
bool is_within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
    ++i;
  }
  return true;
}

// A pid written by sibling(): digits only, 1 .. INT_MAX.
std::optional<long> parse_pid(std::string_view text) {
  long pid = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (ec != std::errc() || end != text.data() + text.size() || pid < 1 ||
      pid > std::numeric_limits<int>::max() || text.front() == '+') {
    return std::nullopt;
  }
  return pid;
}

// Takes the writer's lock on a temporary folder's partial marker without waiting. A live
// writer holds it (flock, so it works across PID namespaces that share a host name); the
// returned descriptor keeps it until closed. -1: the folder is in use or has no marker.
int try_lock_partial(const fs::path& dir) {
  const int fd = ::open((dir / kPartialMarkerFile).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

fs::path canonical_or_self(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p : c;
}

std::set<std::string> listed_files(const nlohmann::json& marker) {
  std::set<std::string> out;
  if (const auto it = marker.find("files"); it != marker.end() && it->is_array()) {
    for (const auto& f : *it) {
      if (f.is_string()) out.insert(f.get<std::string>());
    }
  }
  return out;
}

std::optional<nlohmann::json> read_marker(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(file, ec))) return std::nullopt;
  if (fs::file_size(file, ec) > (1u << 20) || ec) return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("gpumux_result")) return std::nullopt;
  return j;
}

// The names a partial folder's marker lists, one per line: the files created so far.
std::set<std::string> partial_files(const fs::path& dir) {
  std::set<std::string> out;
  std::ifstream in(dir / kPartialMarkerFile);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.insert(line);
  }
  return out;
}

// Deletes the listed plain files of `dir` (and the markers), then the folder if it is empty.
// Anything else is left where it is: gpumux deletes only what it wrote.
bool remove_owned(const fs::path& dir, std::set<std::string> names) {
  names.insert(std::string(kResultMarkerFile));
  names.insert(std::string(kPartialMarkerFile));
  std::error_code ec;
  for (const auto& name : names) {
    const fs::path f = dir / name;
    if (name.find('/') != std::string::npos || name == "." || name == "..") continue;
    if (fs::is_regular_file(fs::symlink_status(f, ec))) fs::remove(f, ec);
  }
  return fs::remove(dir, ec) && !ec;  // fails, harmlessly, if anything else is inside
}

void fsync_path(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

// A streambuf writing to a file descriptor that remembers the first error's errno, so a full
// disk is reported as "No space left on device" and never ignored.
class FdWriteBuf final : public std::streambuf {
 public:
  explicit FdWriteBuf(int fd) : fd_(fd) { setp(buf_.data(), buf_.data() + buf_.size()); }
  int error() const noexcept { return error_; }
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
  int error_ = 0;
  std::array<char, 1 << 16> buf_{};
};

}  // namespace

bool is_safe_result_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

fs::path normal_result_path(const fs::path& dir, const fs::path& base) {
  fs::path p = dir.is_absolute() ? dir : base / dir;
  p = p.lexically_normal();
  // "results/x/" normalises to "results/x/" with an empty last component: drop it.
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

ResultDirInfo inspect_result_dir(const fs::path& dir) {
  ResultDirInfo info;
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(dir, ec);
  if (ec || st.type() == fs::file_type::not_found) return info;  // Absent
  if (st.type() != fs::file_type::directory) {
    info.state = st.type() == fs::file_type::symlink ? ResultDirState::Foreign
                                                     : ResultDirState::NotADirectory;
    if (st.type() == fs::file_type::symlink) info.foreign.push_back("(a symbolic link)");
    return info;
  }
  std::vector<std::string> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path().filename().string());
  }
  if (ec) {
    info.state = ResultDirState::Foreign;
    info.foreign.push_back("(cannot list: " + ec.message() + ")");
    return info;
  }
  if (entries.empty()) {
    info.state = ResultDirState::EmptyDir;
    return info;
  }
  info.marker = read_marker(dir / kResultMarkerFile);
  const std::set<std::string> owned =
      info.marker ? listed_files(*info.marker) : std::set<std::string>{};
  std::sort(entries.begin(), entries.end());
  for (const auto& e : entries) {
    if (e == kResultMarkerFile) continue;
    if (e == kPartialMarkerFile && info.marker) continue;  // left by a commit cut short
    const bool plain_file = fs::is_regular_file(fs::symlink_status(dir / e, ec));
    if (owned.count(e) == 0 || !plain_file) {
      if (info.foreign.size() < 5) info.foreign.push_back(e);
    }
  }
  info.state =
      info.marker && info.foreign.empty() ? ResultDirState::GpumuxResult : ResultDirState::Foreign;
  return info;
}

void check_result_path(const fs::path& abs_dir, const fs::path& repo_root,
                       const std::string& origin) {
  if (!abs_dir.has_filename() || abs_dir == abs_dir.root_path()) {
    refuse(origin, abs_dir, "not a usable results folder (the file-system root)");
  }
  const fs::path target = canonical_or_self(abs_dir);
  const fs::path root = canonical_or_self(repo_root);
  if (is_within(root, target)) {
    refuse(origin, abs_dir,
           "would contain the gpumux repository (" + root.string() +
               "); choose a folder such as results/<name>");
  }
  if (is_within(target, root) && target != root) {
    const std::string first = target.lexically_relative(root).begin()->string();
    if (std::find(kSourceFolders.begin(), kSourceFolders.end(), first) != kSourceFolders.end()) {
      refuse(origin, abs_dir,
             "lies inside the repository's " + first +
                 "/ folder; results go elsewhere, e.g. "
                 "results/<name>");
    }
  }
  std::error_code ec;
  const fs::path cwd = canonical_or_self(fs::current_path(ec));
  if (!ec && is_within(cwd, target)) {
    refuse(origin, abs_dir, "contains the current directory");
  }
}

void check_result_target(const fs::path& abs_dir, const fs::path& repo_root,
                         const std::string& origin, bool replace) {
  check_result_path(abs_dir, repo_root, origin);
  const ResultDirInfo info = inspect_result_dir(abs_dir);
  auto list = [&info] {
    std::string s;
    for (const auto& f : info.foreign) s += (s.empty() ? "" : ", ") + f;
    return s;
  };
  switch (info.state) {
    case ResultDirState::Absent:
    case ResultDirState::EmptyDir:
      return;
    case ResultDirState::NotADirectory:
      refuse(origin, abs_dir, "exists and is not a folder; gpumux will not replace it");
    case ResultDirState::Foreign:
      refuse(origin, abs_dir,
             "exists and holds files gpumux did not write (" + list() +
                 "); gpumux replaces only its own result folders: move them or choose another "
                 "folder");
    case ResultDirState::GpumuxResult:
      if (!replace) {
        refuse(origin, abs_dir, "holds an earlier gpumux result; pass --force to replace it");
      }
      return;
  }
}

std::size_t remove_stale_temporaries(const fs::path& abs_dir) {
  const fs::path parent = abs_dir.parent_path();
  const std::string host = host_name();
  std::string base(1, '.');
  base += abs_dir.filename().string();
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // ".<base>.gpumux-tmp.<pid>.<serial>.<host>" (or -old.): only this folder's, this host's.
    if (name.rfind(base, 0) != 0) continue;
    std::string_view rest = std::string_view(name).substr(base.size());
    const bool is_tmp = rest.rfind(kTmpTag, 0) == 0;
    const bool is_old = rest.rfind(kOldTag, 0) == 0;
    if (!is_tmp && !is_old) continue;
    rest.remove_prefix(is_tmp ? kTmpTag.size() : kOldTag.size());
    const auto dot1 = rest.find('.');
    const auto dot2 = dot1 == std::string_view::npos ? dot1 : rest.find('.', dot1 + 1);
    if (dot2 == std::string_view::npos || rest.substr(dot2 + 1) != host) continue;
    const auto pid = parse_pid(rest.substr(0, dot1));
    const std::string_view serial = rest.substr(dot1 + 1, dot2 - dot1 - 1);
    const bool serial_ok =
        !serial.empty() && serial.find_first_not_of("0123456789") == std::string_view::npos;
    if (!pid || !serial_ok) continue;
    if (process_alive(*pid) || !fs::is_directory(fs::symlink_status(it->path(), ec))) continue;
    if (is_old) {
      // An earlier result set aside by a replace that did not finish (the fallback without
      // an atomic exchange): put it back if nothing took its place, else remove it.
      const auto marker = read_marker(it->path() / kResultMarkerFile);
      if (!marker) continue;
      if (!fs::exists(fs::symlink_status(abs_dir, ec))) {
        fs::rename(it->path(), abs_dir, ec);
        continue;
      }
      if (remove_owned(it->path(), listed_files(*marker))) ++removed;
      continue;
    }
    // A temporary folder: only while nobody holds its writer's lock.
    const int lock = try_lock_partial(it->path());
    if (lock < 0) continue;
    std::set<std::string> names = partial_files(it->path());
    if (const auto marker = read_marker(it->path() / kResultMarkerFile)) {
      const auto listed = listed_files(*marker);
      names.insert(listed.begin(), listed.end());
    }
    if (remove_owned(it->path(), names)) ++removed;
    ::close(lock);
  }
  return removed;
}

ResultWriter::ResultWriter(fs::path abs_dir, fs::path repo_root, std::string origin, bool replace)
    : dir_(std::move(abs_dir)),
      repo_root_(std::move(repo_root)),
      origin_(std::move(origin)),
      replace_(replace) {
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

void ResultWriter::write(const std::string& name, const std::function<void(std::ostream&)>& fill) {
  if (committed_) throw std::logic_error("ResultWriter::write after commit");
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') {
    throw std::logic_error("ResultWriter::write: bad file name '" + name + "'");
  }
  const fs::path file = tmp_ / name;
  auto fail = [&](int err) {
    throw Error("cannot write results: " + name + " of " + dir_.string() + " (" + origin_ +
                "): " + reason(err) + "; nothing was written under that name");
  };
  {
    // Record the name first, so a killed run's leftovers can be cleaned up file by file.
    const std::string line = name + "\n";
    if (::write(lock_fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      fail(errno != 0 ? errno : EIO);
    }
  }
  files_.push_back(name);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) fail(errno);
  FdWriteBuf buf(fd);
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
  if (err != 0) fail(err);
}

void ResultWriter::commit(const nlohmann::json& identity) {
  auto failure = [&](const std::string& what) {
    return Error("cannot write results: " + what + " (" + origin_ + " " + dir_.string() +
                 "); nothing was written under that name");
  };
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
      FdWriteBuf buf(fd);
      std::ostream out(&buf);
      out << text;
      err = buf.flush_all();
      if (err == 0 && ::fsync(fd) != 0) err = errno;
      if (::close(fd) != 0 && err == 0) err = errno;
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
