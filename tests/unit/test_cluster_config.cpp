// The config's "cluster" object: expansion into devices (node-major) and a Topology, sourced
// link defaults, strict errors naming the file and key, and determinism.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/run_fingerprint.hpp"
#include "gpumux/model/topology.hpp"
#include "unit_fixtures.hpp"

namespace fx = gpumux::fixtures;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using gpumux::DeviceId;

namespace {

nlohmann::json cluster_config() {
  return nlohmann::json::parse(R"({
    "name": "cluster",
    "cluster": {"nodes": 2, "gpus_per_node": 3, "profile": "gpu-a"},
    "policy": {"name": "fifo"},
    "workload": {"jobs": [{"name": "t", "kind": "training", "model": "small", "batch": 8,
                           "iterations": 3}]}
  })");
}

std::string parse_error(const nlohmann::json& doc, const std::filesystem::path& root) {
  try {
    (void)gpumux::parse_experiment(doc, "cfg.json", root);
  } catch (const gpumux::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("A cluster expands node-major into devices and a topology", "[config][cluster]") {
  const auto root = fx::make_repo("cluster_ok");
  const auto cfg = gpumux::parse_experiment(cluster_config(), "cfg.json", root);
  REQUIRE(cfg.devices.size() == 6);
  for (const auto& d : cfg.devices) {
    CHECK(d.profile == "gpu-a");
    CHECK_FALSE(d.memory_bytes.has_value());
  }
  REQUIRE(cfg.topology.has_value());
  const gpumux::Topology& t = *cfg.topology;
  CHECK(t.nodes == 2);
  CHECK(t.gpus_per_node == 3);
  CHECK(t.gpu_count() == 6);
  // Device i is on node i / 3.
  for (int i = 0; i < 6; ++i) CHECK(t.node_of(static_cast<DeviceId>(i)) == (i < 3 ? 0u : 1u));
  // Intra-node default: the profile's peer_gbps 10 GB/s x 8 = 80 Gbit/s; not above its host
  // link (H2D 10, D2H 20 GB/s), so PCIe: NCCL's 5.7 us ring step.
  CHECK(t.intra_node.gbit_per_s == 80.0);
  CHECK(t.intra_node.latency_ns == gpumux::kRingStepLatencyPcieNs);
  CHECK(t.intra_node.latency_ns == 5'700);
  // Network default: 10 GbE, NCCL's 9.6 us network ring step.
  CHECK(t.network.gbit_per_s == 10.0);
  CHECK(t.network.latency_ns == 9'600);
  // The resolved config keeps the cluster as written.
  CHECK(cfg.resolved.contains("cluster"));
  CHECK_FALSE(cfg.resolved.contains("devices"));
}

TEST_CASE("Cluster links given in the config override the defaults", "[config][cluster]") {
  const auto root = fx::make_repo("cluster_links");
  auto doc = cluster_config();
  doc["cluster"]["intra_node"] = {{"gbit_per_s", 200}};
  doc["cluster"]["network"] = {{"gbit_per_s", 25}, {"latency_us", 12.5}};
  const auto cfg = gpumux::parse_experiment(doc, "cfg.json", root);
  REQUIRE(cfg.topology.has_value());
  CHECK(cfg.topology->intra_node == gpumux::Link{200.0, 5'700});  // latency still the default
  CHECK(cfg.topology->network == gpumux::Link{25.0, 12'500});
}

TEST_CASE("A profile whose peer link beats its host link defaults to NVLink", "[config][cluster]") {
  const auto root = fx::make_repo("cluster_nvlink");
  auto profile = fx::profile_json("nv");
  profile["link"]["peer_gbps"] = 300;  // above H2D 10 / D2H 20 GB/s
  fx::write_file(root / "traces/devices/nv.json", profile.dump(1));
  auto doc = cluster_config();
  doc["cluster"]["profile"] = "nv";
  const auto cfg = gpumux::parse_experiment(doc, "cfg.json", root);
  CHECK(cfg.topology->intra_node == gpumux::Link{2'400.0, gpumux::kRingStepLatencyNvlinkNs});
}

TEST_CASE("A plain devices list has no topology", "[config][cluster]") {
  const auto root = fx::make_repo("cluster_none");
  auto doc = cluster_config();
  doc.erase("cluster");
  doc["devices"] = {{{"profile", "gpu-b"}}};
  const auto cfg = gpumux::parse_experiment(doc, "cfg.json", root);
  CHECK_FALSE(cfg.topology.has_value());
  CHECK(cfg.devices.size() == 1);
}

TEST_CASE("Cluster errors name the file and the key", "[config][cluster]") {
  const auto root = fx::make_repo("cluster_bad");
  auto doc = cluster_config();
  SECTION("devices and cluster together") {
    doc["devices"] = {{{"profile", "gpu-a"}}};
    CHECK_THAT(parse_error(doc, root),
               Equals("cfg.json: cluster: give either devices or cluster, not both"));
  }
  SECTION("neither") {
    doc.erase("cluster");
    CHECK_THAT(parse_error(doc, root), Equals("cfg.json: devices: missing required key"));
  }
  SECTION("nodes 0") {
    doc["cluster"]["nodes"] = 0;
    CHECK_THAT(parse_error(doc, root),
               Equals("cfg.json: cluster.nodes: must be an integer in [1, 65536], got 0"));
  }
  SECTION("gpus_per_node missing") {
    doc["cluster"].erase("gpus_per_node");
    CHECK_THAT(parse_error(doc, root),
               Equals("cfg.json: cluster.gpus_per_node: missing required key"));
  }
  SECTION("too many GPUs for a DeviceId") {
    doc["cluster"]["nodes"] = 65536;
    CHECK_THAT(parse_error(doc, root), Contains("cfg.json: cluster.gpus_per_node: nodes x "
                                                "gpus_per_node must be at most 65536"));
  }
  SECTION("unknown profile lists the valid names") {
    doc["cluster"]["profile"] = "v100";
    CHECK_THAT(parse_error(doc, root),
               Equals("cfg.json: cluster.profile: unknown device profile 'v100'; valid names: "
                      "gpu-a, gpu-b"));
  }
  SECTION("negative bandwidth") {
    doc["cluster"]["network"] = {{"gbit_per_s", -10}};
    CHECK_THAT(parse_error(doc, root),
               Equals("cfg.json: cluster.network.gbit_per_s: must be > 0, got -10"));
  }
  SECTION("negative latency") {
    doc["cluster"]["intra_node"] = {{"latency_us", -1}};
    CHECK_THAT(parse_error(doc, root), Contains("cfg.json: cluster.intra_node.latency_us: must"));
  }
  SECTION("unknown keys") {
    doc["cluster"]["network"] = {{"gbps", 10}};
    CHECK_THAT(parse_error(doc, root), Equals("cfg.json: cluster.network.gbps: unknown key"));
    doc["cluster"].erase("network");
    doc["cluster"]["links"] = 1;
    CHECK_THAT(parse_error(doc, root), Equals("cfg.json: cluster.links: unknown key"));
  }
  SECTION("wrong types") {
    doc["cluster"]["nodes"] = 2.0;
    CHECK_THAT(parse_error(doc, root), Contains("cfg.json: cluster.nodes: expected an integer"));
    doc["cluster"]["nodes"] = 2;
    doc["cluster"]["network"] = 10;
    CHECK_THAT(parse_error(doc, root), Contains("cfg.json: cluster.network: expected an object"));
  }
  SECTION("a CPU profile") {
    auto cpu = fx::profile_json("cpu");
    cpu["kind"] = "cpu";
    fx::write_file(root / "traces/devices/cpu.json", cpu.dump(1));
    doc["cluster"]["profile"] = "cpu";
    CHECK_THAT(parse_error(doc, root),
               Equals("cfg.json: cluster.profile: 'cpu' is a cpu profile; a cluster is made of "
                      "GPUs"));
  }
  SECTION("a profile without a peer link needs the intra-node bandwidth") {
    auto lone = fx::profile_json("lone");
    lone["link"]["peer_gbps"] = 0;
    fx::write_file(root / "traces/devices/lone.json", lone.dump(1));
    doc["cluster"]["profile"] = "lone";
    CHECK_THAT(parse_error(doc, root), Contains("cfg.json: cluster.intra_node: profile 'lone' "
                                                "has no GPU-to-GPU bandwidth"));
    doc["cluster"]["intra_node"] = {{"latency_us", 3}};
    CHECK_THAT(parse_error(doc, root), Contains("cfg.json: cluster.intra_node.gbit_per_s:"));
    doc["cluster"]["intra_node"] = {{"gbit_per_s", 64}};
    CHECK_THAT(parse_error(doc, root), Equals("(no error)"));
  }
}

TEST_CASE("A cluster parses the same every time and enters the fingerprint", "[config][cluster]") {
  const auto root = fx::make_repo("cluster_det");
  const auto a = gpumux::parse_experiment(cluster_config(), "cfg.json", root);
  const auto b = gpumux::parse_experiment(cluster_config(), "cfg.json", root);
  CHECK(a.topology == b.topology);
  CHECK(a.devices.size() == b.devices.size());
  CHECK(gpumux::run_fingerprint(a, root) == gpumux::run_fingerprint(b, root));
  // Another shape, another fingerprint.
  auto wider = cluster_config();
  wider["cluster"]["gpus_per_node"] = 4;
  const auto c = gpumux::parse_experiment(wider, "cfg.json", root);
  CHECK(gpumux::run_fingerprint(c, root) != gpumux::run_fingerprint(a, root));
  // The network's defaults written out give the same topology.
  auto explicit_links = cluster_config();
  explicit_links["cluster"]["network"] = {{"gbit_per_s", 10}, {"latency_us", 9.6}};
  const auto d = gpumux::parse_experiment(explicit_links, "cfg.json", root);
  CHECK(d.topology == a.topology);
  // A changed profile changes the defaults and the fingerprint (the profile file is hashed).
  auto profile = fx::profile_json("gpu-a");
  profile["link"]["peer_gbps"] = 5;
  fx::write_file(root / "traces/devices/gpu-a.json", profile.dump(1));
  const auto e = gpumux::parse_experiment(cluster_config(), "cfg.json", root);
  CHECK(e.topology->intra_node.gbit_per_s == 40.0);
  CHECK(gpumux::run_fingerprint(e, root) != gpumux::run_fingerprint(a, root));
}
