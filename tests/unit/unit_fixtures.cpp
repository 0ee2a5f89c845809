// Shared fixtures of the unit tests (declared in unit_fixtures.hpp). This file holds no test
// case and so no assertion: the tests that use these fixtures make them.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include "unit_fixtures.hpp"

namespace gpumux::fixtures {

namespace fs = std::filesystem;

namespace {

// Removes the folders this test process created when it exits.
struct TempDirs {
  std::vector<fs::path> dirs;
  ~TempDirs() {
    std::error_code ec;
    for (const auto& d : dirs) fs::remove_all(d, ec);
  }
};
TempDirs& temp_dirs() {
  static TempDirs dirs;
  return dirs;
}

}  // namespace

fs::path make_temp_dir(const std::string& tag) {
  static std::atomic<int> counter{0};
  const fs::path dir =
      fs::temp_directory_path() /
      ("gpumux_unit_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  temp_dirs().dirs.push_back(dir);
  return dir;
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Three layers: conv (implicit GEMM 16x8x27), BatchNorm, linear head. Totals hand-summed:
// params 216 + 16 + 1290 = 1522; buffers 16; weight bytes (params + buffers) * 4 = 6152.
nlohmann::json model_json(const std::string& name) {
  auto j = nlohmann::json::parse(R"({
    "name": "NAME", "display_name": "Tiny net", "source": "unit test", "domain": "other",
    "input_shape": [3, 4, 4], "dtype_bytes": 4,
    "totals": {"params": 1522, "buffers": 16, "weight_bytes": 6152,
               "fwd_macs_per_sample": 4736, "layers": 3},
    "layers": [
      {"name": "conv", "kind": "conv", "params": 216, "buffers": 0, "tensors": 1,
       "weight_bytes": 864, "input_bytes": 192, "output_bytes": 512, "fwd_flops": 6912,
       "bwd_flops": 6912, "gemms": [{"m": 16, "n": 8, "k": 27, "count": 1}]},
      {"name": "bn", "kind": "norm", "params": 16, "buffers": 16, "tensors": 4,
       "weight_bytes": 128, "input_bytes": 512, "output_bytes": 512, "fwd_flops": 512,
       "bwd_flops": 1024, "gemms": []},
      {"name": "fc", "kind": "linear", "params": 1290, "buffers": 0, "tensors": 2,
       "weight_bytes": 5160, "input_bytes": 512, "output_bytes": 40, "fwd_flops": 2570,
       "bwd_flops": 5140, "gemms": [{"m": 1, "n": 10, "k": 128, "count": 1}]}
    ],
    "groupings": {"pipeswitch": [0, 2]}
  })");
  j["name"] = name;
  return j;
}

// A complete GPU profile with round numbers (the cost-model tests compute with them by hand):
// 4 SMs, 10 TFLOPS fp32, 40 TFLOPS fp16, 1000 GB/s at 50 %, 64x64 tiles, 1 us launches.
nlohmann::json profile_json(const std::string& name) {
  auto j = nlohmann::json::parse(R"({
    "name": "NAME", "display_name": "Test GPU", "kind": "gpu",
    "memory_bytes": 8589934592, "sm_count": 4,
    "compute": {"fp32_tflops": 10, "tf32_tflops": 0, "fp16_tflops": 40, "bf16_tflops": 0,
                "mem_bandwidth_gbps": 1000,
                "efficiency": {"conv": 0.5, "linear": 0.8, "attention": 0.4, "norm": 1.0,
                               "pool": 1.0, "embedding": 1.0, "elementwise": 1.0},
                "memory_efficiency": 0.5, "tile_m": 64, "tile_n": 64},
    "kernels": {"launch_ns": 1000,
                "per_layer": {"conv": 1, "linear": 2, "norm": 1, "pool": 1, "embedding": 1,
                              "attention": 3, "elementwise": 1}},
    "link": {"h2d_gbps": 10, "d2h_gbps": 20, "h2d_latency_ns": 2000, "d2h_latency_ns": 3000,
             "pageable_factor": 0.5, "peer_gbps": 10},
    "runtime": {"context_create_ns": 80000000,
                "stream_create_ns": 5000, "malloc_base_ns": 50000,
                "malloc_per_gib_ns": 1000000, "free_ns": 14000, "event_ns": 4000,
                "pin_per_gib_ns": 1000000, "interpreter_start_ns": 50000000,
                "framework_import_ns": 1000000000, "library_init_ns": 950000000,
                "construct_base_ns": 100000000, "construct_per_mparam_ns": 15000000,
                "weight_read_gbps": 2, "process_reap_ns": 300000000},
    "sharing": {"timeslice_ns": 1024000, "context_switch_ns": 50000, "mps_efficiency": 0.9,
                "concurrent_efficiency": 0.95},
    "sources": {"compute.fp32_tflops": "unit test"}
  })");
  j["name"] = name;
  return j;
}

// A repository root with traces/models/{small,tiny}.json, traces/devices/{gpu-a,gpu-b}.json,
// traces/arrivals/steady.csv and traces/workloads/mixed.jsonl.
fs::path make_repo(const std::string& tag) {
  const fs::path root = make_temp_dir("repo_" + tag);
  write_file(root / "traces/models/tiny.json", model_json("tiny").dump(1));
  write_file(root / "traces/models/small.json", model_json("small").dump(1));
  write_file(root / "traces/devices/gpu-a.json", profile_json("gpu-a").dump(1));
  write_file(root / "traces/devices/gpu-b.json", profile_json("gpu-b").dump(1));
  write_file(root / "traces/arrivals/steady.csv", "arrival_s,tokens\n0.0,5\n0.5,6\n1.5,7\n3.0,8\n");
  write_file(root / "traces/workloads/mixed.jsonl",
             "{\"name\": \"train-a\", \"kind\": \"training\", \"model\": \"tiny\", "
             "\"batch\": 8, \"arrival_s\": 0.0, \"iterations\": 10}\n"
             "{\"name\": \"infer-b\", \"kind\": \"inference\", \"model\": \"small\", "
             "\"batch\": 1, \"arrival_s\": 2.0, \"requests\": [2.0, 2.5]}\n");
  return root;
}

}  // namespace gpumux::fixtures
