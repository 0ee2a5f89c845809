// Resolving relative input paths (input_path.hpp).
#include "gpumux/io/input_path.hpp"

#include <system_error>

namespace gpumux {

namespace fs = std::filesystem;

ResolvedInput resolve_input_path(const fs::path& name, const std::string& referring_file,
                                 const fs::path& repo_root) {
  if (name.is_absolute() || name.empty()) return {name, false};
  const fs::path folder = fs::path(referring_file).parent_path();
  std::error_code ec;
  const fs::path near = folder / name;
  if (fs::exists(near, ec)) return {near, false};
  if (!repo_root.empty() && fs::exists(repo_root / name, ec)) return {repo_root / name, true};
  if (folder.empty() && !repo_root.empty()) return {repo_root / name, false};
  return {near, false};
}

std::string repo_root_fallback_warning(const std::string& name, const std::string& referring_file,
                                       const std::string& key_path, const fs::path& repo_root) {
  const fs::path p(name);
  if (p.is_absolute() || p.empty() || *p.begin() == "traces") return "";
  if (!resolve_input_path(p, referring_file, repo_root).via_repo_root) return "";
  const fs::path folder = fs::path(referring_file).parent_path();
  return referring_file + ": " + key_path + ": '" + name + "' is not in the config's folder (" +
         (folder.empty() ? "." : folder.string()) +
         ") and was found relative to the repository root instead; this fallback is deprecated: "
         "write the path relative to the config's folder, or absolute";
}

}  // namespace gpumux
