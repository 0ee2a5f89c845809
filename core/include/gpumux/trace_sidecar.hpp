// The `.SOURCE` file `gpumux trace import` writes beside an arrival CSV (traces/importing.md):
// provenance, one "key: value" per line, first `written_by: gpumux trace import` (how gpumux
// knows it wrote the pair and may replace it), and `data_sha256`, the digest of the CSV it
// describes. The CSV is renamed into place before its .SOURCE, so a crash between the two
// renames leaves the new CSV beside the earlier .SOURCE: the digest tells, and the replay
// reader refuses such a pair.
//
// Thread rules: free functions without shared state.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpumux {

inline constexpr std::string_view kImportSidecarMarker = "written_by: gpumux trace import";

/// `<csv>.SOURCE`.
[[nodiscard]] std::filesystem::path import_sidecar_of(const std::filesystem::path& csv);

/// The digest the .SOURCE beside `csv` records for it: nullopt when there is no readable
/// .SOURCE, it was not written by gpumux trace import, or it predates the data_sha256 line.
[[nodiscard]] std::optional<std::string> import_sidecar_data_sha256(
    const std::filesystem::path& csv);

}  // namespace gpumux
