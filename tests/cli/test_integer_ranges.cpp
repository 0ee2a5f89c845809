// Every integer is range-checked as written, before it is narrowed or multiplied: a value
// that used to wrap (2^32 read as 0 by a 32-bit field, 2^44 MiB times 2^20 = 2^64 = 0 bytes)
// is exit 2 with the file, the key and the allowed range, before anything runs.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

/// Runs `config` with `--set key=value` and expects exit 2 naming the key, its range and the
/// value given, and no results folder.
void expect_range_error(const std::string& name, const std::string& config,
                        const std::string& set_key, const std::string& value,
                        const std::string& error_key, const std::string& range,
                        const std::string& prefix = "") {
  const fs::path cfg = write(name + ".json", config);
  const fs::path out = scratch() / ("out-" + name);
  const Outcome o = gpumux("run '" + cfg.string() + "' --set '" + set_key + "=" + value +
                               "' --out '" + out.string() + "' -q",
                           prefix);
  INFO(name << ": " << o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find(": " + error_key + ": must be an integer in " + range + ", got " + value) !=
        std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

const char* const kTuning = R"({"name": "ranges-tuning", "devices": [{"profile": "v100-pcie3x16"}],
  "policy": {"name": "trial_per_gpu"},
  "workload": {"tuning": [{"name": "t", "tuner": "random_search",
    "params": {"num_samples": 2, "max_epochs": 2},
    "search_space": {"lr": {"loguniform": [0.001, 1.0]}},
    "model": "alexnet", "batch": 8, "samples_per_epoch": 16, "max_trials": 4}]}})";

const char* const kEmulated = R"({"name": "ranges-emulated", "platform": "emulated",
  "devices": [{"profile": "v100-pcie3x16"}], "policy": {"name": "time_slicing"},
  "workload": {"jobs": [{"name": "train", "kind": "training", "model": "resnet18", "batch": 2,
    "iterations": 1}]}})";

constexpr const char* k2to32 = "4294967296";      // 2^32: 0 in 32 bits
constexpr const char* k2to32p2 = "4294967298";    // 2^32 + 2: 2 in 32 bits
constexpr const char* k2to44 = "17592186044416";  // 2^44 MiB = 2^64 B: 0 bytes

}  // namespace

TEST_CASE("compute.tile_m = 2^32 in a device profile is exit 2 naming the key", "[cli][numbers]") {
  // Before: read as 0 in 32 bits, clamped to 1 by the cost model, and the run went on with
  // other latencies (default.json under time_slicing: p50 43.71 ms became 43.22 ms).
  const fs::path root = scratch() / "root-tile";
  fs::create_directories(root / "traces" / "devices");
  fs::create_directory_symlink(fs::path(GPUMUX_SOURCE_DIR) / "traces" / "models",
                               root / "traces" / "models");
  nlohmann::json profile = nlohmann::json::parse(
      slurp(fs::path(GPUMUX_SOURCE_DIR) / "traces" / "devices" / "v100-pcie3x16.json"));
  for (const char* key : {"tile_m", "tile_n"}) {
    profile["compute"][key] = 64;
  }
  const fs::path file = root / "traces" / "devices" / "v100-pcie3x16.json";
  struct Case {
    const char* object;
    const char* key;
    std::uint64_t value;
    const char* where;
  };
  const Case cases[] = {{"compute", "tile_m", std::uint64_t{1} << 32, "compute.tile_m"},
                        {"compute", "tile_n", (std::uint64_t{1} << 32) + 64, "compute.tile_n"},
                        {nullptr, "sm_count", (std::uint64_t{1} << 32) + 80, "sm_count"}};
  for (const Case& c : cases) {
    nlohmann::json p = profile;
    (c.object != nullptr ? p[c.object][c.key] : p[c.key]) = c.value;
    std::ofstream(file) << p.dump(1);
    const fs::path out = scratch() / (std::string("out-tile-") + c.key);
    const Outcome o = gpumux(
        "run experiments/configs/default.json --set policy.name=time_slicing "
        "--out '" +
            out.string() + "' -q",
        "GPUMUX_ROOT='" + root.string() + "'");
    INFO(c.key << ": " << o.output);
    CHECK(o.exit_code == 2);
    CHECK(o.output.find(file.string() + ": " + c.where +
                        ": must be an integer in [1, 1048576], got " + std::to_string(c.value)) !=
          std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("emulated host_arena_mib and max_copy_mib that wrapped to 0 bytes are exit 2",
          "[cli][numbers]") {
  // Before: 2^44 MiB x 2^20 wrapped to 0 bytes; the run went on with the default arena (or
  // no copy cap) and exited 0.
  const std::string range = "[0, 1073741824]";
  expect_range_error("arena", kEmulated, "platform_params.host_arena_mib", k2to44,
                     "platform_params.host_arena_mib", range);
  expect_range_error("copy", kEmulated, "platform_params.max_copy_mib", k2to44,
                     "platform_params.max_copy_mib", range);
  expect_range_error("weights", kEmulated, "platform_params.host_weights_mib", k2to44,
                     "platform_params.host_weights_mib", "[1, 1073741824]");
  expect_range_error("region", kEmulated, "platform_params.cpu_region_mib", k2to44,
                     "platform_params.cpu_region_mib", "[1, 1073741824]");
}

TEST_CASE("an emulated arena in range that the host cannot hold names its key, exit 1",
          "[cli][numbers]") {
  // 2^30 MiB (1 PiB), the largest accepted: more than any address space. Before: a bare
  // `error: std::bad_alloc`. (Sanitizers' allocators must return null, as libc's does.)
  const fs::path cfg = write("arena-huge.json", kEmulated);
  const fs::path out = scratch() / "out-arena-huge";
  const Outcome o =
      gpumux("run '" + cfg.string() + "' --set platform_params.host_arena_mib=1073741824 --out '" +
                 out.string() + "' -q",
             "ASAN_OPTIONS=allocator_may_return_null=1");
  INFO(o.output);
  CHECK(o.exit_code == 1);
  CHECK(o.output.find("platform emulated: cannot allocate host memory for device 0's arena "
                      "(profile 'v100-pcie3x16', 1073741824 MiB) (") != std::string::npos);
  CHECK(o.output.find("arena-huge.json: platform_params.host_arena_mib; 1 devices)") !=
        std::string::npos);
  CHECK(o.output.find("std::bad_alloc") == std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("integers narrowed to 32 bits are checked first: one row per key", "[cli][numbers]") {
  struct Row {
    const char* name;
    const char* config;
    std::string set_key, value, error_key, range;
  };
  const std::string t = "workload.tuning.0.", tp = "workload.tuning[0].params.";
  const Row rows[] = {
      // policies: depth became a stream's 32-bit max_in_flight (2^32: 0, refused at run time
      // with exit 1 and no key; 2^32 + 2: silently 2)
      {"depth", kSmallConfig, "policy.params.depth", k2to32, "policy.params.depth", "[1, 1024]"},
      {"depth2", kSmallConfig, "policy.params.depth", k2to32p2, "policy.params.depth", "[1, 1024]"},
      // tuners: every count and budget was cast to int (2^32 + 1: 1)
      {"samples", kTuning, t + "params.num_samples", "4294967297", tp + "num_samples",
       "[1, 100000]"},
      {"max_epochs", kTuning, t + "params.max_epochs", "4294967297", tp + "max_epochs",
       "[1, 1000000]"},
  };
  for (const Row& r : rows) {
    expect_range_error(std::string("row-") + r.name, r.config, r.set_key, r.value, r.error_key,
                       r.range);
  }
  // The same through each tuner that read its own counts.
  struct TunerRow {
    const char* tuner;
    const char* params;
    const char* key;
    const char* value;
    const char* range;
  };
  const TunerRow tuners[] = {
      {"asha", R"({"max_concurrent": 4294967297})", "max_concurrent", "4294967297", "[1, 100000]"},
      {"asha", R"({"eta": 4294967299})", "eta", "4294967299", "[2, 1000000]"},
      {"successive_halving", R"({"num_samples": 4294967305})", "num_samples", "4294967305",
       "[1, 100000]"},
      {"hyperband", R"({"rounds": 4294967297})", "rounds", "4294967297", "[0, 100000]"},
      {"hyperband", R"({"min_epochs": 4294967297})", "min_epochs", "4294967297", "[1, 1000000]"},
      {"pbt", R"({"population": 4294967298})", "population", "4294967298", "[2, 100000]"},
      {"pbt", R"({"perturbation_interval": 4294967297})", "perturbation_interval", "4294967297",
       "[1, 1000000]"},
      {"grid_search", R"({"points_per_dim": 4294967299})", "points_per_dim", "4294967299",
       "[1, 100000]"},
  };
  int n = 0;
  for (const TunerRow& r : tuners) {
    nlohmann::json cfg = nlohmann::json::parse(kTuning);
    cfg["workload"]["tuning"][0]["tuner"] = r.tuner;
    cfg["workload"]["tuning"][0]["params"] = nlohmann::json::parse(r.params);
    const std::string name = std::string("tuner-") + std::to_string(n++);
    const fs::path file = write(name + ".json", cfg.dump());
    const Outcome o = gpumux("validate '" + file.string() + "'");
    INFO(r.tuner << " " << r.params << ": " << o.output);
    CHECK(o.exit_code == 2);
    CHECK(o.output.find(file.string() + ": " + tp + r.key + ": must be an integer in " + r.range +
                        ", got " + r.value) != std::string::npos);
  }
}
