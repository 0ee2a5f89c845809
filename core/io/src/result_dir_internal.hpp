// Helpers shared by result_dir.cpp (paths, ownership), result_cleanup.cpp (dead writers'
// folders) and result_writer.cpp (writing a folder). Private to core/src; defined in
// result_dir.cpp. Thread rules: all are free functions; sibling() draws from an atomic
// counter.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpumux::result_dir_detail {

/// Tags in the names of folders beside a result: ".<name><tag><pid>.<serial>.<host>".
inline constexpr std::string_view kTmpTag = ".gpumux-tmp.";  ///< a folder being written
inline constexpr std::string_view kOldTag = ".gpumux-old.";  ///< an earlier result set aside

/// This host's name, usable inside a file name ("localhost" when unknown).
[[nodiscard]] std::string host_name();

/// A new, unique name for a folder beside `dir`, carrying this process's pid and host.
[[nodiscard]] std::filesystem::path sibling(const std::filesystem::path& dir, std::string_view tag);

/// The system's text for an errno value.
[[nodiscard]] std::string reason(int err);

/// Throws UsageError "<origin>: <path>: <why>" (exit 2).
[[noreturn]] void refuse(const std::string& origin, const std::filesystem::path& path,
                         const std::string& why);

/// The "files" a result marker lists.
[[nodiscard]] std::set<std::string> listed_files(const nlohmann::json& marker);

/// A folder's result marker, if it has a valid one.
[[nodiscard]] std::optional<nlohmann::json> read_marker(const std::filesystem::path& file);

/// Deletes the listed plain files of `dir` and the markers, then `dir` if it is empty.
/// Returns whether `dir` is gone; anything gpumux did not list is left in place.
bool remove_owned(const std::filesystem::path& dir, std::set<std::string> names);

/// fsync()s a file or folder opened with `flags` (O_RDONLY | O_DIRECTORY for a folder).
void fsync_path(const std::filesystem::path& p, int flags);

}  // namespace gpumux::result_dir_detail
