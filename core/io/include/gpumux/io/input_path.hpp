// Where a relative path named inside a config (or a job file) points: the folder of the file
// that names it first, then the repository root (the earlier rule, kept so that configs
// naming repository data as "traces/..." keep working). docs/configuration.md, "Paths".
//
// Thread rules: free functions; they read the filesystem only.
#pragma once

#include <filesystem>
#include <string>

namespace gpumux {

struct ResolvedInput {
  std::filesystem::path path;  ///< the file to open (or, when found nowhere, the one to name)
  bool via_repo_root = false;  ///< found only relative to the repository root
};

/// Resolves `name` as named in `referring_file`: an absolute name as is; a relative one
/// against the referring file's folder when a file is there, else against `repo_root` when one
/// is there. Found nowhere: the referring folder's candidate (the repository root's when the
/// referring file has no folder, as for in-memory configs).
[[nodiscard]] ResolvedInput resolve_input_path(const std::filesystem::path& name,
                                               const std::string& referring_file,
                                               const std::filesystem::path& repo_root);

/// The deprecation warning for `name` (named at `key_path` of `referring_file`) when it was
/// found only through the repository root, or "" when it was not, or when it names the
/// repository's own data (a path under traces/), which configs address that way by design.
[[nodiscard]] std::string repo_root_fallback_warning(const std::string& name,
                                                     const std::string& referring_file,
                                                     const std::string& key_path,
                                                     const std::filesystem::path& repo_root);

}  // namespace gpumux
