// Locating the run-time data (data_root.hpp): $GPUMUX_ROOT, the install layout beside the
// program, then a source checkout above the current directory or above the program.
#include "gpumux/io/data_root.hpp"

#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/config.hpp"

#ifndef GPUMUX_DATA_FROM_BIN
#define GPUMUX_DATA_FROM_BIN "../share/gpumux"  // CMake's default bin and share folders
#endif

namespace gpumux {

namespace fs = std::filesystem;

namespace {

bool has_models(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "traces" / "models", ec);
}

DataRoot make_root(fs::path dir) {
  std::error_code ec;
  const bool installed = fs::is_regular_file(dir / kInstallMarker, ec);
  return DataRoot{std::move(dir), installed};
}

// The first of `from` and its ancestors that holds traces/models; each is noted in `searched`.
std::optional<fs::path> search_upwards(const fs::path& from, std::vector<std::string>& searched) {
  std::error_code ec;
  fs::path p = fs::absolute(from, ec);
  if (ec) p = from;
  searched.push_back(p.string() + " and its parent folders");
  for (;;) {
    if (has_models(p)) return p;
    if (!p.has_parent_path() || p.parent_path() == p) return std::nullopt;
    p = p.parent_path();
  }
}

}  // namespace

fs::path current_executable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

DataRoot locate_data_root(const fs::path& start, const fs::path& executable) {
  if (const char* env = std::getenv("GPUMUX_ROOT"); env != nullptr && *env != '\0') {
    fs::path root(env);
    if (!has_models(root)) {
      throw UsageError("GPUMUX_ROOT=" + root.string() + " has no traces/models folder");
    }
    return make_root(std::move(root));
  }
  std::vector<std::string> searched{"$GPUMUX_ROOT (not set)"};
  if (!executable.empty()) {
    const fs::path installed = (executable.parent_path() / GPUMUX_DATA_FROM_BIN).lexically_normal();
    searched.push_back(installed.string());
    if (has_models(installed)) return make_root(installed);
  }
  if (auto found = search_upwards(start, searched)) return make_root(std::move(*found));
  if (!executable.empty()) {
    if (auto found = search_upwards(executable.parent_path(), searched)) {
      return make_root(std::move(*found));
    }
  }
  std::string where;
  for (const auto& s : searched) where += "\n  " + s;
  throw UsageError(
      "cannot find gpumux's data (a folder holding traces/models); searched:" + where +
      "\ninstall gpumux (cmake --install), run it inside a checkout, or set GPUMUX_ROOT");
}

std::filesystem::path find_repo_root(const std::filesystem::path& start) {
  return locate_data_root(start, current_executable()).dir;
}

}  // namespace gpumux
