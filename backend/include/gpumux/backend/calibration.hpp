// `gpumux calibrate`: measures a GPU and writes a device profile the simulator reads
// (H2D/D2H bandwidth and per-call latency, launch and event overheads, cudaMalloc/cudaFree
// costs, per-layer forward/backward times of the zoo, context start-up). Needs the "cuda"
// platform; without it, throws NotCompiled or DeviceUnavailable.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gpumux {

struct CalibrationOptions {
  std::string device_name;             ///< profile name to write, e.g. "h100-sxm"
  std::filesystem::path out_file;      ///< traces/devices/<name>.calibrated.json
  std::filesystem::path base_profile;  ///< datasheet profile whose fields are kept/overridden
  std::filesystem::path models_dir;    ///< traces/models
  std::vector<std::string> models;     ///< empty = every zoo model
  std::vector<unsigned> batches{1, 8, 32};
  bool quick = false;  ///< fewer sizes and repetitions
  /// An existing out_file may be replaced (the CLI checked, with --force, that `gpumux
  /// calibrate` wrote it). Without it, a file that appears there during the run is kept.
  bool replace = false;
};

/// Runs the calibration; returns a process exit code (0 on success).
int run_calibration(const CalibrationOptions& options);

}  // namespace gpumux
