// Dead writers' folders (result_dir.hpp): the temporary folders of runs that ended without
// finishing (killed, out of power), beside one target or anywhere under a results root.
//
// Liveness: a writer holds a flock on its temporary folder's partial marker for as long as it
// lives (ResultWriter); the kernel drops it when the process ends, however it ends, and it
// works across PID namespaces that share a host name. The pid in the folder's name is checked
// too, so a folder is left alone while anything could still be writing it.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
#include <system_error>

#include "gpumux/io/result_dir.hpp"
#include "result_dir_internal.hpp"

namespace gpumux {

namespace fs = std::filesystem;
using namespace result_dir_detail;

namespace {

bool process_alive(long pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
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
// writer holds it; the returned descriptor keeps it until closed. -1: the folder is in use or
// has no marker.
int try_lock_partial(const fs::path& dir) {
  const int fd = ::open((dir / kPartialMarkerFile).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
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

// Bytes of the plain files `names` (and the markers) in `dir`: what remove_owned frees.
std::uint64_t owned_bytes(const fs::path& dir, std::set<std::string> names) {
  names.insert(std::string(kResultMarkerFile));
  names.insert(std::string(kPartialMarkerFile));
  std::uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& name : names) {
    if (name.find('/') != std::string::npos || name == "." || name == "..") continue;
    const fs::path f = dir / name;
    if (!fs::is_regular_file(fs::symlink_status(f, ec))) continue;
    const auto size = fs::file_size(f, ec);
    if (!ec) bytes += size;
  }
  return bytes;
}

// A folder named ".<base><tag><pid>.<serial>.<host>" by a process of this host.
struct Candidate {
  fs::path path;
  fs::path target;        // the result folder it was written for: <parent>/<base>
  bool temporary = true;  // kTmpTag; else kOldTag, an earlier result set aside
  long pid = 0;
};

std::optional<Candidate> parse_candidate(const fs::path& path, const std::string& host) {
  const std::string name = path.filename().string();
  if (name.size() < 2 || name.front() != '.') return std::nullopt;
  // The last tag: a base name may itself contain one (names allow '.'), a host name not.
  const auto tmp = name.rfind(kTmpTag);
  const auto old = name.rfind(kOldTag);
  const bool temporary = old == std::string::npos || (tmp != std::string::npos && tmp > old);
  const std::size_t at = temporary ? tmp : old;
  if (at == std::string::npos || at < 2) return std::nullopt;
  std::string_view rest = std::string_view(name).substr(at + kTmpTag.size());  // same length
  const auto dot1 = rest.find('.');
  const auto dot2 = dot1 == std::string_view::npos ? dot1 : rest.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || rest.substr(dot2 + 1) != host) return std::nullopt;
  const auto pid = parse_pid(rest.substr(0, dot1));
  const std::string_view serial = rest.substr(dot1 + 1, dot2 - dot1 - 1);
  if (!pid || serial.empty() || serial.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  return Candidate{path, path.parent_path() / name.substr(1, at - 1), temporary, *pid};
}

// Removes (or puts back) one dead writer's folder; nothing when its writer may be alive or the
// folder is not gpumux's.
std::optional<ReclaimedFolder> reclaim(const Candidate& c) {
  std::error_code ec;
  if (process_alive(c.pid) || !fs::is_directory(fs::symlink_status(c.path, ec))) {
    return std::nullopt;
  }
  ReclaimedFolder r{c.path, 0, c.pid, false, false};
  if (!c.temporary) {
    // An earlier result set aside by a replace that did not finish (the fallback without an
    // atomic exchange): put it back if nothing took its place, else remove it.
    const auto marker = read_marker(c.path / kResultMarkerFile);
    if (!marker) return std::nullopt;
    if (!fs::exists(fs::symlink_status(c.target, ec))) {
      fs::rename(c.path, c.target, ec);
      if (ec) return std::nullopt;
      r.path = c.target;
      r.restored = true;
      return r;
    }
    r.bytes = owned_bytes(c.path, listed_files(*marker));
    r.kept = !remove_owned(c.path, listed_files(*marker));
    return r;
  }
  // A temporary folder: only while nobody holds its writer's lock.
  const int lock = try_lock_partial(c.path);
  if (lock < 0) return std::nullopt;
  std::set<std::string> names = partial_files(c.path);
  if (const auto marker = read_marker(c.path / kResultMarkerFile)) {
    const auto listed = listed_files(*marker);
    names.insert(listed.begin(), listed.end());
  }
  r.bytes = owned_bytes(c.path, names);
  r.kept = !remove_owned(c.path, names);
  ::close(lock);
  return r;
}

// "1.2 GiB", "340.0 KiB", "12 B".
std::string size_text(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes) / 1024;
  std::size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

}  // namespace

std::string describe(const ReclaimedFolder& r) {
  const std::string who = "a run that ended without finishing (pid " + std::to_string(r.pid) + ")";
  if (r.restored) {
    return "put back " + r.path.string() + " under its name: an earlier result set aside by " + who;
  }
  if (r.kept) {
    return "removed gpumux's files (" + size_text(r.bytes) + ") from " + r.path.string() +
           ", the temporary folder of " + who + "; files gpumux did not write are still there";
  }
  return "removed " + r.path.string() + " (" + size_text(r.bytes) + "), the temporary folder of " +
         who;
}

std::size_t remove_stale_temporaries(const fs::path& abs_dir) {
  const std::string host = host_name();
  std::vector<Candidate> found;
  std::error_code ec;
  for (fs::directory_iterator it(abs_dir.parent_path(), ec), end; !ec && it != end;
       it.increment(ec)) {
    auto c = parse_candidate(it->path(), host);
    if (c && c->target.filename() == abs_dir.filename()) found.push_back(std::move(*c));
  }
  std::size_t removed = 0;
  for (const Candidate& c : found) {
    const auto r = reclaim(c);
    if (r && !r->kept && !r->restored) ++removed;
  }
  return removed;
}

fs::path results_root_of(const fs::path& abs_dir, const fs::path& repo_root) {
  std::error_code ec;
  const fs::path results = fs::absolute(repo_root / "results", ec).lexically_normal();
  const fs::path rel = abs_dir.lexically_relative(results);
  const bool inside = !rel.empty() && rel != "." && *rel.begin() != "..";
  return inside ? results : abs_dir.parent_path();
}

std::vector<ReclaimedFolder> reclaim_dead_temporaries(const fs::path& root) {
  const std::string host = host_name();
  std::vector<ReclaimedFolder> out;
  std::vector<std::pair<fs::path, int>> dirs{{root, 1}};
  std::size_t entries = 0;
  // Breadth first: the root's own entries, then its folders'. Candidates are collected before
  // any is removed, so no folder changes while it is being listed.
  for (std::size_t i = 0; i < dirs.size() && entries < kReclaimMaxEntries; ++i) {
    const fs::path dir = dirs[i].first;
    const int depth = dirs[i].second;
    std::vector<Candidate> found;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (++entries > kReclaimMaxEntries) break;
      const std::string name = it->path().filename().string();
      if (auto c = parse_candidate(it->path(), host)) {
        found.push_back(std::move(*c));
      } else if (depth < kReclaimDepth && name.front() != '.' &&
                 fs::is_directory(it->symlink_status(ec))) {
        dirs.emplace_back(it->path(), depth + 1);
      }
    }
    for (const Candidate& c : found) {
      if (auto r = reclaim(c)) out.push_back(std::move(*r));
    }
  }
  return out;
}

}  // namespace gpumux
