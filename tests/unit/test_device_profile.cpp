// Device profiles: every checked-in profile loads; the schema is strict and errors name the key.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "unit_fixtures.hpp"

namespace fx = gpumux::fixtures;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

namespace {

const std::filesystem::path kDevices =
    std::filesystem::path(GPUMUX_SOURCE_DIR) / "traces" / "devices";

// Loads `doc` from a temp file; returns the message without the "<file>: " prefix.
std::string load_error(const nlohmann::json& doc) {
  return fx::trace_error(doc, "p.json",
                         [](const auto& path) { return gpumux::load_device_profile(path); });
}

}  // namespace

TEST_CASE("Every profile in traces/devices loads", "[device_profile]") {
  const auto names = gpumux::device_profile_names(kDevices);
  if (names.empty()) WARN("no device profiles in " << kDevices.string());
  for (const auto& name : names) {
    INFO("profile " << name);
    const auto p = gpumux::find_device_profile(kDevices, name);
    CHECK(p.name == name);
    CHECK(p.memory_bytes > 0);
    CHECK(p.fp32_tflops > 0);
    CHECK(p.mem_bandwidth_gbps > 0);
    if (p.kind == gpumux::DeviceKind::Gpu) {
      CHECK(p.h2d_gbps > 0);
      CHECK(p.d2h_gbps > 0);
    }
    for (double e : p.efficiency) CHECK((e > 0 && e <= 1));
  }
  CHECK(std::is_sorted(names.begin(), names.end()));
}

TEST_CASE("A hand-written profile loads with every field", "[device_profile]") {
  const auto dir = fx::make_temp_dir("profile_ok");
  auto doc = fx::profile_json("gpu-x");
  doc["provenance"] = "unit test";
  doc["calibrated"] = {{"tiny",
                        {{"8", {{"forward_ns", {10, 20, 30}}, {"backward_ns", {1, 2, 3}}}},
                         {"1", {{"forward_ns", {4, 5, 6}}}}}}};
  doc["calibration"] = {{"fit", {{"r2", 0.99}}}};
  fx::write_file(dir / "gpu-x.json", doc.dump());
  const auto p = gpumux::find_device_profile(dir, "gpu-x");
  CHECK(p.display_name == "Test GPU");
  CHECK(p.kind == gpumux::DeviceKind::Gpu);
  CHECK(p.memory_bytes == 8589934592ull);
  CHECK(p.sm_count == 4);
  CHECK(p.fp16_tflops == 40);
  CHECK(p.efficiency[static_cast<int>(gpumux::LayerKind::Linear)] == 0.8);
  CHECK(p.kernels_per_layer[static_cast<int>(gpumux::LayerKind::Attention)] == 3);
  CHECK(p.launch_ns == 1000);
  CHECK(p.h2d_latency_ns == 2000);
  CHECK(p.pageable_factor == 0.5);
  CHECK(p.context_create_ns == 80000000);
  CHECK(p.timeslice_ns == 1024000);
  CHECK(p.concurrent_efficiency == 0.95);
  CHECK(p.provenance == "unit test");
  REQUIRE(p.calibrated.count("tiny") == 1);
  CHECK(p.calibrated.at("tiny").at(8).forward_ns == std::vector<gpumux::DurationNs>{10, 20, 30});
  CHECK(p.calibrated.at("tiny").at(8).backward_ns.size() == 3);
  CHECK(p.calibrated.at("tiny").at(1).backward_ns.empty());
}

TEST_CASE("Profile errors name the key path", "[device_profile]") {
  auto doc = fx::profile_json("p");
  SECTION("efficiency out of range") {
    doc["compute"]["efficiency"]["conv"] = 1.5;
    CHECK_THAT(load_error(doc), Equals("compute.efficiency.conv: must be in (0, 1]"));
  }
  SECTION("missing number") {
    doc["link"].erase("h2d_gbps");
    CHECK_THAT(load_error(doc), Equals("link.h2d_gbps: missing required key"));
  }
  SECTION("unknown key") {
    doc["compute"]["fp8_tflops"] = 1;
    CHECK_THAT(load_error(doc), Equals("compute.fp8_tflops: unknown key"));
  }
  SECTION("missing kind in efficiency") {
    doc["compute"]["efficiency"].erase("pool");
    CHECK_THAT(load_error(doc), Equals("compute.efficiency.pool: missing required key"));
  }
  SECTION("integer written with a fraction") {
    doc["kernels"]["launch_ns"] = 5000.5;
    CHECK_THAT(load_error(doc), Contains("kernels.launch_ns: expected an integer"));
  }
  SECTION("negative duration") {
    doc["runtime"]["free_ns"] = -1;
    CHECK_THAT(load_error(doc), Contains("runtime.free_ns: must be >= 0"));
  }
  SECTION("a GPU needs link bandwidth") {
    doc["link"]["d2h_gbps"] = 0;
    CHECK_THAT(load_error(doc), Contains("link.d2h_gbps: must be > 0"));
  }
  SECTION("bad kind") {
    doc["kind"] = "tpu";
    CHECK_THAT(load_error(doc), Contains("kind: unknown value 'tpu'; valid values: gpu, cpu"));
  }
  SECTION("sources must be strings") {
    doc["sources"]["sm_count"] = 80;
    CHECK_THAT(load_error(doc), Contains("sources.sm_count: expected a string"));
  }
  SECTION("calibrated batch keys are integers") {
    doc["calibrated"] = {{"tiny", {{"eight", {{"forward_ns", {1}}}}}}};
    CHECK_THAT(load_error(doc), Contains("calibrated.tiny.eight: a batch size key"));
  }
  SECTION("calibrated times are non-negative") {
    doc["calibrated"] = {{"tiny", {{"8", {{"forward_ns", {1, -2}}}}}}};
    CHECK_THAT(load_error(doc), Contains("calibrated.tiny.8.forward_ns: element 1"));
  }
}

TEST_CASE("Process start is composed from sourced parts and scales with the model",
          "[device_profile]") {
  const auto dir = fx::make_temp_dir("profile_start");
  fx::write_file(dir / "gpu-x.json", fx::profile_json("gpu-x").dump());
  const auto p = gpumux::find_device_profile(dir, "gpu-x");
  // interpreter 50 ms + import 1 s + library init 0.95 s; the context (80 ms) is separate.
  CHECK(p.process_start_ns == 2'000'000'000);
  CHECK(p.process_reap_ns == 300'000'000);
  // A model of 2,000,000 parameters and 8 MB of weights: construction 100 ms + 2 x 15 ms,
  // the read 8e6 B / 2 GB/s = 4 ms.
  const auto model = gpumux::parse_model_text(R"({
    "name": "m2", "display_name": "two million", "source": "unit test", "domain": "vision",
    "input_shape": [1], "dtype_bytes": 4,
    "totals": {"params": 2000000, "buffers": 0, "weight_bytes": 8000000,
               "fwd_macs_per_sample": 1, "layers": 1},
    "layers": [{"name": "fc", "kind": "linear", "params": 2000000, "buffers": 0, "tensors": 2,
                "weight_bytes": 8000000, "input_bytes": 4, "output_bytes": 4, "fwd_flops": 2,
                "bwd_flops": 4, "gemms": [{"m": 1, "n": 1, "k": 1, "count": 1}]}],
    "groupings": {}})",
                                              "m2.json");
  CHECK(p.model_build_ns(model) == 100'000'000 + 30'000'000 + 4'000'000);
}

TEST_CASE("Process-start keys are validated", "[device_profile]") {
  auto doc = fx::profile_json("p");
  SECTION("the old single key names its replacements") {
    doc["runtime"]["process_start_ns"] = 2652300000;
    CHECK_THAT(load_error(doc), Contains("runtime.process_start_ns: replaced by "
                                         "interpreter_start_ns + framework_import_ns"));
  }
  SECTION("each part is required") {
    doc["runtime"].erase("construct_per_mparam_ns");
    CHECK_THAT(load_error(doc), Equals("runtime.construct_per_mparam_ns: missing required key"));
  }
  SECTION("negative reap") {
    doc["runtime"]["process_reap_ns"] = -5;
    CHECK_THAT(load_error(doc), Contains("runtime.process_reap_ns: must be >= 0"));
  }
  SECTION("weight read bandwidth in range") {
    doc["runtime"]["weight_read_gbps"] = 1e9;
    CHECK_THAT(load_error(doc), Contains("runtime.weight_read_gbps: out of range"));
  }
  SECTION("no weight read is allowed") {
    doc["runtime"]["weight_read_gbps"] = 0;
    CHECK_THAT(load_error(doc), Equals("(no error)"));
  }
}

TEST_CASE("A CPU profile may have no host link", "[device_profile]") {
  auto doc = fx::profile_json("cpu");
  doc["kind"] = "cpu";
  for (const char* key : {"h2d_gbps", "d2h_gbps", "pageable_factor", "peer_gbps"})
    doc["link"][key] = 0;
  CHECK_THAT(load_error(doc), Equals("(no error)"));
}

TEST_CASE("find_device_profile lists the valid names for an unknown one", "[device_profile]") {
  const auto dir = fx::make_temp_dir("profile_find");
  fx::write_file(dir / "b.json", fx::profile_json("b").dump());
  fx::write_file(dir / "a.json", fx::profile_json("a").dump());
  fx::write_file(dir / "mismatch.json", fx::profile_json("other").dump());
  CHECK(gpumux::device_profile_names(dir) == std::vector<std::string>{"a", "b", "mismatch"});
  CHECK_THROWS_AS(gpumux::find_device_profile(dir, "c"), gpumux::UsageError);
  CHECK_THROWS_WITH(gpumux::find_device_profile(dir, "c"),
                    Equals("unknown device profile 'c'; valid names: a, b, mismatch"));
  CHECK_THROWS_WITH(gpumux::find_device_profile(dir, "mismatch"),
                    Contains("name: profile name 'other' does not match the file name"));
}
