// Device profile files (traces/devices/<name>.json, schema in traces/formats.md): strict
// parsing, within physical bounds, and lookup by name in a folder.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/model/device_profile.hpp"

namespace gpumux {

/// Parses a profile file strictly; throws TraceError naming the file and key path.
[[nodiscard]] DeviceProfile load_device_profile(const std::filesystem::path& file);
/// The same from the text of a profile file; `file` names it in messages.
[[nodiscard]] DeviceProfile parse_device_profile_text(std::string_view text,
                                                      const std::string& file);

/// Finds `name` in `directory` (<name>.json); throws UsageError listing the valid names.
[[nodiscard]] DeviceProfile find_device_profile(const std::filesystem::path& directory,
                                                const std::string& name);
[[nodiscard]] std::vector<std::string> device_profile_names(const std::filesystem::path& directory);

}  // namespace gpumux
