// The config's "cluster" object: strict reading, sourced link defaults, expansion into devices.
#include "cluster_config.hpp"

#include <algorithm>
#include <cstdint>

#include "gpumux/api/ids.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/model/collective_cost.hpp"
#include "gpumux/model/device_profile.hpp"

namespace gpumux {
namespace {

// DeviceId is 16 bits: a cluster expands to at most 2^16 devices.
constexpr auto kMaxClusterGpus = static_cast<std::int64_t>(kMaxDevices);
// Far above any link (NVLink 5 is 14.4 Tbit/s per GPU); rejects typos such as 1e12.
constexpr double kMaxLinkGbitPerS = 1e6;

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::uint32_t count_in_range(JsonReader& r, const std::string& key) {
  return r.integer_in<std::uint32_t>(key, 1, kMaxClusterGpus);
}

// {"gbit_per_s", "latency_us"}, each defaulting to `fallback`'s value when omitted.
Link read_link(JsonReader& parent, const std::string& key, const Link& fallback,
               const std::string& missing_bandwidth) {
  const auto* value = parent.optional(key);
  if (value == nullptr) {
    if (!missing_bandwidth.empty()) parent.fail(key, missing_bandwidth);
    return fallback;
  }
  JsonReader l(*value, parent.file(), parent.path_of(key));
  Link link = fallback;
  if (l.has("gbit_per_s")) {
    link.gbit_per_s = l.positive("gbit_per_s", l.required_number("gbit_per_s"));
    if (link.gbit_per_s > kMaxLinkGbitPerS) {
      l.fail("gbit_per_s", "out of range (more than 1e6 Gbit/s)");
    }
  } else if (!missing_bandwidth.empty()) {
    l.fail("gbit_per_s", missing_bandwidth);
  }
  link.latency_ns = l.duration_or("latency_us", TimeUnit::Microseconds, fallback.latency_ns);
  l.finish();
  return link;
}

}  // namespace

ClusterExpansion parse_cluster(const nlohmann::json& cluster, const std::string& file,
                               const std::string& path, const std::filesystem::path& repo_root) {
  JsonReader c(cluster, file, path);
  ClusterExpansion out;
  Topology& t = out.topology;
  t.nodes = count_in_range(c, "nodes");
  t.gpus_per_node = count_in_range(c, "gpus_per_node");
  if (std::int64_t{t.nodes} * t.gpus_per_node > kMaxClusterGpus) {
    c.fail("gpus_per_node", "nodes x gpus_per_node must be at most " +
                                std::to_string(kMaxClusterGpus) + " (DeviceId is 16 bits)");
  }

  const std::string profile = c.required_string("profile");
  const auto directory = repo_root / "traces" / "devices";
  const auto names = device_profile_names(directory);
  if (!std::binary_search(names.begin(), names.end(), profile)) {
    c.fail("profile", "unknown device profile '" + profile + "'; valid names: " + join(names));
  }
  const DeviceProfile p = find_device_profile(directory, profile);
  if (p.kind != DeviceKind::Gpu) {
    c.fail("profile", "'" + profile + "' is a " + std::string(kDeviceKindNames.name(p.kind)) +
                          " profile; a cluster is made of GPUs");
  }

  const Link intra = intra_node_default(p);
  const std::string no_peer = intra.gbit_per_s > 0
                                  ? ""
                                  : "profile '" + profile +
                                        "' has no GPU-to-GPU bandwidth (link.peer_gbps 0); give "
                                        "intra_node.gbit_per_s";
  t.intra_node = read_link(c, "intra_node", intra, no_peer);
  t.network = read_link(c, "network", Link{kTenGbeGbitPerS, kRingStepLatencyNetworkNs}, "");
  c.finish();

  out.devices.assign(t.gpu_count(), DeviceConfig{profile, std::nullopt});
  return out;
}

}  // namespace gpumux
