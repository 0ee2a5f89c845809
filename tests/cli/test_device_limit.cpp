// The documented device limit, 65,536 (a DeviceId is 16 bits: ids 0 to 65535), is what runs:
// a cluster of exactly 65,536 GPUs runs to the end (before: exit 1 "platform sim: too many
// devices" after 16 s, no key), and one device more is exit 2 naming the key, before anything
// runs. The profile is read once for all devices (it was parsed once per device).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

std::string with_devices(const std::string& devices) {
  return R"({"name": "device-limit", )" + devices + R"(, "policy": {"name": "time_slicing"},
    "trace": false, "workload": {"jobs": [{"name": "train", "kind": "training",
    "model": "resnet50", "batch": 16, "iterations": 2}]}})";
}

}  // namespace

TEST_CASE("a cluster of 65,536 GPUs, the documented maximum, runs", "[cli][numbers]") {
  const fs::path cfg =
      write("gpus-65536.json",
            with_devices(
                R"("cluster": {"nodes": 8192, "gpus_per_node": 8, "profile": "v100-pcie3x16"})"));
  const fs::path out = scratch() / "out-gpus-65536";
  const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "' -q");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  const nlohmann::json summary = nlohmann::json::parse(slurp(out / "summary.json"));
  CHECK(summary.at("devices").size() == 65536);
  CHECK(summary.at("devices").back().at("device") == 65535);
  CHECK(summary.at("jobs").at(0).at("outcome") == "finished");
  fs::remove_all(out);  // 22 MB of summary and run.json
}

TEST_CASE("65,537 devices is exit 2 naming the key, as a list or a cluster", "[cli][numbers]") {
  nlohmann::json list = nlohmann::json::array();
  for (int i = 0; i < 65537; ++i) list.push_back({{"profile", "v100-pcie3x16"}});
  const fs::path listed = write("devices-65537.json", with_devices("\"devices\": " + list.dump()));
  Outcome o = gpumux("run '" + listed.string() + "' --out '" +
                     (scratch() / "out-devices-65537").string() + "' -q");
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find(listed.string() +
                      ": devices: at most 65536 devices (a DeviceId is 16 bits), got 65537") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(scratch() / "out-devices-65537"));

  const fs::path cluster =
      write("cluster-65537.json",
            with_devices(
                R"("cluster": {"nodes": 1, "gpus_per_node": 65537, "profile": "v100-pcie3x16"})"));
  o = gpumux("run '" + cluster.string() + "' --out '" + (scratch() / "out-cluster-65537").string() +
             "' -q");
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find(cluster.string() +
                      ": cluster.gpus_per_node: must be an integer in [1, 65536], got 65537") !=
        std::string::npos);
}
