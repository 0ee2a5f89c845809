// The config's optional "cluster" object: nodes of identical GPUs, expanded into
// the devices list (node-major) and a Topology. Keys and defaults: docs/configuration.md.
//
// Internal to gpumux_io. Thread rules: pure apart from reading the named device profile.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/io/config.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/topology.hpp"

namespace gpumux {

struct ClusterExpansion {
  std::vector<DeviceConfig> devices;  ///< nodes x gpus_per_node entries, node-major
  Topology topology;
};

/// Reads `cluster` (the value of key `path` in `file`) strictly; throws ConfigError naming the
/// file and key. Loads the profile from <repo_root>/traces/devices for the intra-node default.
[[nodiscard]] ClusterExpansion parse_cluster(const nlohmann::json& cluster, const std::string& file,
                                             const std::string& path,
                                             const std::filesystem::path& repo_root);

}  // namespace gpumux
