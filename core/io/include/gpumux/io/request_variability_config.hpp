// Reading a dynamic service's "dynamic" value (docs/configuration.md) into a
// RequestVariability (gpumux/model/request_variability.hpp).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/model/request_variability.hpp"

namespace gpumux {

/// Parses a "dynamic" value: an object, or a string naming a JSON file (relative paths resolve
/// against `repo_root`). Errors are ConfigErrors naming `file` and `key_path` (or, for a
/// file's content, a TraceError naming that file).
[[nodiscard]] std::shared_ptr<RequestVariability> parse_request_variability(
    const nlohmann::json& value, const std::string& file, const std::string& key_path,
    const std::filesystem::path& repo_root);

}  // namespace gpumux
