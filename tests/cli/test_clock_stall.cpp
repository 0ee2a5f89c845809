// Runs always end: a job whose costs are all zero never lets the simulated clock reach the
// horizon. Refused before the run when no device gives it a cost; stopped while it runs when it
// lands on the one device where it costs nothing. Against the real binary.
//
// Both cases are hidden from test discovery ([.]): tests/CMakeLists.txt runs each under a ctest
// TIMEOUT of seconds, as a run that cannot advance its clock otherwise never returns.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

// A data root (GPUMUX_ROOT) holding a model and a device profile whose costs are all zero:
// one layer without FLOPs or bytes, and a V100 profile without launch, copy, or runtime costs.
// Every value is one the readers accept. The V100 profile itself is there too.
fs::path zero_cost_root() {
  const fs::path root = scratch() / "zero-root";
  write("zero-root/traces/models/zero_cost.json", R"({
    "name": "zero_cost", "dtype_bytes": 4,
    "totals": {"params": 0, "buffers": 0, "weight_bytes": 0, "fwd_macs_per_sample": 0, "layers": 1},
    "layers": [{"name": "l0", "kind": "elementwise", "params": 0, "buffers": 0, "tensors": 0,
                "weight_bytes": 0, "input_bytes": 0, "output_bytes": 0, "fwd_flops": 0,
                "bwd_flops": 0, "gemms": []}]})");
  const fs::path v100 = fs::path(GPUMUX_SOURCE_DIR) / "traces" / "devices" / "v100-pcie3x16.json";
  nlohmann::json p = nlohmann::json::parse(slurp(v100));
  write("zero-root/traces/devices/v100-pcie3x16.json", p.dump(1));
  p["name"] = "zero-cost";
  p["kernels"]["launch_ns"] = 0;
  for (const char* key : {"h2d_latency_ns", "d2h_latency_ns"}) p["link"][key] = 0;
  for (auto& [key, value] : p["runtime"].items()) {
    if (key.size() > 3 && key.substr(key.size() - 3) == "_ns") value = 0;
  }
  p["sharing"]["timeslice_ns"] = 0;
  p["sharing"]["context_switch_ns"] = 0;
  write("zero-root/traces/devices/zero-cost.json", p.dump(1));
  return root;
}

// A training job of the zero-cost model with iterations no run finishes, on `devices`.
std::string zero_cost_config(const std::string& devices) {
  return R"({"name": "zero", "devices": )" + devices + R"(, "policy": {"name": "time_slicing"},
    "workload": {"jobs": [{"name": "train", "kind": "training", "model": "zero_cost",
      "batch": 1, "arrival_s": 0, "iterations": 1000000000000000}]},
    "horizon_s": 10, "events": false, "trace": false})";
}

}  // namespace

TEST_CASE("a job whose costs are all zero on every device is refused before it runs",
          "[.][clock][zero_cost_everywhere]") {
  const fs::path root = zero_cost_root();
  const fs::path cfg =
      write("zero-everywhere.json", zero_cost_config(R"([{"profile": "zero-cost"}])"));
  const fs::path out = scratch() / "zero-everywhere";
  const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "'",
                           "GPUMUX_ROOT='" + root.string() + "'");
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("error: " + (root / "traces" / "models" / "zero_cost.json").string() +
                      ": job 'train' (model 'zero_cost', batch 1): an iteration takes 0 ns on "
                      "every device of the run (profile 'zero-cost')") != std::string::npos);
  CHECK(o.output.find("never advance") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("a run whose clock stops advancing ends with exit 2 naming the op, model and profile",
          "[.][clock][zero_cost_device]") {
  // The job runs on device 0, where it costs nothing; on device 1 it would cost launches, so
  // only the run itself can find that its clock does not move.
  const fs::path root = zero_cost_root();
  const fs::path cfg =
      write("zero-here.json",
            zero_cost_config(R"([{"profile": "zero-cost"}, {"profile": "v100-pcie3x16"}])"));
  const fs::path out = scratch() / "zero-here";
  const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "'",
                           "GPUMUX_ROOT='" + root.string() + "'");
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("error: " + (root / "traces" / "models" / "zero_cost.json").string() +
                      ": job 'train' (model 'zero_cost'): a ") != std::string::npos);
  CHECK(o.output.find("op over layers 0-0 takes 0 ns on device 0 (profile 'zero-cost'), and "
                      "262144 ops of zero length completed at ") != std::string::npos);
  CHECK(o.output.find("the simulated clock cannot advance") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(scratch())) {
    CHECK(e.path().filename().string().find(".zero-here.gpumux-") == std::string::npos);
  }
}
