// Running the real gpumux binary from the CLI tests: a scratch folder per test process, files
// written into it, and the program's exit code and combined output.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace cli_test {

namespace fs = std::filesystem;

/// A valid config that runs in well under a second: two ResNet-50 training iterations and two
/// inference requests under time slicing on a simulated V100.
inline const char* const kSmallConfig = R"({
  "name": "cli-test",
  "devices": [{"profile": "v100-pcie3x16"}],
  "policy": {"name": "time_slicing"},
  "workload": {"jobs": [
    {"name": "train", "kind": "training", "model": "resnet50", "batch": 16, "arrival_s": 0, "iterations": 2},
    {"name": "svc", "kind": "inference", "model": "resnet50", "batch": 1, "arrival_s": 0, "requests": [0.01, 0.02]}
  ]}
})";

struct Outcome {
  int exit_code;
  std::string output;
};

/// This test process's own folder under the system's temporary directory.
inline fs::path scratch() {
  static const fs::path dir = [] {
    std::random_device rd;
    fs::path d = fs::temp_directory_path() / ("gpumux_cli_" + std::to_string(rd()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

/// Writes `content` to scratch()/`name` and returns its path.
inline fs::path write(const std::string& name, const std::string& content) {
  const fs::path p = scratch() / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p) << content;
  return p;
}

/// A 4-point sweep (policies mps and exclusive x seeds 1 and 2) over `base_config`, written to
/// scratch()/`name`-base.json, with results into `out`; returns the sweep file's path.
inline fs::path four_point_sweep(const std::string& name, const std::string& base_config,
                                 const fs::path& out) {
  const fs::path base = write(name + "-base.json", base_config);
  return write(name + ".json", R"({"name": ")" + name + R"(", "base": ")" + base.string() +
                                   R"(", "out_dir": ")" + out.string() +
                                   R"(", "grid": {"policy.name": ["mps", "exclusive"], )"
                                   R"("seed": [1, 2]}})");
}

/// `p` in single quotes, for a shell command line (paths here hold no quote). Built in steps:
/// GCC 12 warns (-Wrestrict) on "'" + string.
inline std::string quoted(const fs::path& p) {
  std::string s(1, '\'');
  s += p.string();
  s += '\'';
  return s;
}

/// A config that replays the arrival CSV `csv` as one ResNet-50 service on a V100.
inline std::string replay_config(const fs::path& csv) {
  return R"({"name": "replay", "devices": [{"profile": "v100-pcie3x16"}],
      "policy": {"name": "time_slicing"}, "workload": {"jobs": [{"name": "svc", "kind":
      "inference", "model": "resnet50", "requests": {"file": ")" +
         csv.string() + R"("}}]}})";
}

/// The whole content of a file ("" when it cannot be read).
inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs the gpumux binary from the source directory. `prefix` is shell text placed before the
/// program: environment assignments ("NAME=value") or commands ending in ';' ("ulimit -f 64;").
inline Outcome gpumux(const std::string& args, const std::string& prefix = "") {
  const fs::path log = scratch() / "log.txt";
  const std::string cmd = "cd '" + std::string(GPUMUX_SOURCE_DIR) + "' && " + prefix + " '" +
                          GPUMUX_BINARY + "' " + args + " > '" + log.string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(log)};
}

/// Runs a shell command line (from the source directory), capturing its exit code and output.
inline Outcome gpumux_shell(const std::string& command) {
  const fs::path log = scratch() / "log.txt";
  const std::string cmd = "cd '" + std::string(GPUMUX_SOURCE_DIR) + "' && " + command + " > '" +
                          log.string() + "' 2>&1";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(log)};
}

}  // namespace cli_test
