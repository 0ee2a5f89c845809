// The `.SOURCE` file `gpumux trace import` writes beside an arrival CSV (traces/importing.md):
// provenance, one "key: value" per line, first `written_by: gpumux trace import` (how gpumux
// knows it wrote the pair and may replace it), and `data_sha256`, the digest of the CSV it
// describes. Each key once; each value escaped (escape_sidecar_value) so that it is one line
// whatever it holds. The CSV is named before its .SOURCE, so a crash between the two leaves
// the new CSV beside the earlier .SOURCE: the digest tells, and the replay reader refuses
// such a pair.
//
// Thread rules: free functions without shared state.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpumux {

inline constexpr std::string_view kImportSidecarMarker = "written_by: gpumux trace import";

/// The keys of a .SOURCE, in the order gpumux writes them.
inline constexpr std::array<std::string_view, 12> kImportSidecarKeys = {
    "written_by", "origin",  "origin_bytes", "origin_sha256", "data_sha256", "licence",
    "preset",     "command", "date",         "gpumux",        "rows",        "time"};

/// `<csv>.SOURCE`.
[[nodiscard]] std::filesystem::path import_sidecar_of(const std::filesystem::path& csv);

/// `value` as one line of a .SOURCE: a backslash as `\\`, a line feed `\n`, a carriage
/// return `\r`, a tab `\t`, every other control byte (0x00-0x1F, 0x7F) `\xNN` (two lowercase
/// hex digits); all other bytes (UTF-8 included) as they are.
[[nodiscard]] std::string escape_sidecar_value(std::string_view value);

/// The digest the .SOURCE beside `csv` records for it: nullopt when there is no readable
/// .SOURCE, it was not written by gpumux trace import (its first line is not the marker), or
/// it predates the data_sha256 line. A .SOURCE that begins with the marker is read strictly:
/// every line `key: value` with a key of kImportSidecarKeys, each key once, no raw control
/// byte, data_sha256 64 hex digits; else TraceError naming the .SOURCE and the line.
[[nodiscard]] std::optional<std::string> import_sidecar_data_sha256(
    const std::filesystem::path& csv);

}  // namespace gpumux
