// Result folders: where they may go and whose they are (see result_dir.hpp); the helpers
// shared with the writer (result_writer.cpp) are declared in result_dir_internal.hpp.
#include "gpumux/io/result_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <system_error>

#include "gpumux/api/errors.hpp"
#include "result_dir_internal.hpp"

namespace gpumux {

namespace fs = std::filesystem;

namespace result_dir_detail {

// The repository's own folders: results never go inside them (out_dir "traces" would
// otherwise replace the inputs). results/ and build folders are not listed.
constexpr std::array<std::string_view, 13> kSourceFolders = {
    "traces", "core", "sim",   "backend", "policies", "experiments", "plots",
    "tests",  "docs", "cmake", ".ci",     ".git",     "shared"};

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

}  // namespace result_dir_detail

using namespace result_dir_detail;

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
  auto list = [&info](bool skip_tables = false) {
    std::string s;
    for (const auto& f : info.foreign) {
      if (!skip_tables || !is_sweep_own_file(f)) s += (s.empty() ? "" : ", ") + f;
    }
    return s;
  };
  switch (info.state) {
    case ResultDirState::Absent:
    case ResultDirState::EmptyDir:
      return;
    case ResultDirState::NotADirectory:
      refuse(origin, abs_dir, "exists and is not a folder; gpumux will not replace it");
    case ResultDirState::Foreign: {
      // A sweep's folder (gpumux results one level down) is gpumux's too, but not one run's
      // to replace: say so rather than calling its points someone else's files.
      const bool all_results =
          !info.marker && std::all_of(info.foreign.begin(), info.foreign.end(), [&](const auto& f) {
            return is_sweep_own_file(f) ||
                   inspect_result_dir(abs_dir / f).state == ResultDirState::GpumuxResult;
          });
      if (all_results) {
        refuse(origin, abs_dir,
               "holds a sweep's results (" + list(/*skip_tables=*/true) +
                   "), which a run does not replace; give the run its own folder (--out DIR)");
      }
      refuse(origin, abs_dir,
             "exists and holds files gpumux did not write (" + list() +
                 "); gpumux replaces only its own result folders: move them or choose another "
                 "folder");
    }
    case ResultDirState::GpumuxResult:
      if (!replace) {
        refuse(origin, abs_dir, "holds an earlier gpumux result; pass --force to replace it");
      }
      return;
  }
}

}  // namespace gpumux
