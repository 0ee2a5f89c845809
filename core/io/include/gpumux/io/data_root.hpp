// Where gpumux finds its run-time data (traces/models, traces/devices, arrivals, workloads,
// experiments/configs): a source checkout or an installed <prefix>/share/gpumux.
// Not thread-safe only in that it reads the environment; call it before starting threads.
#pragma once

#include <filesystem>

namespace gpumux {

struct DataRoot {
  std::filesystem::path dir;  ///< holds traces/models
  /// An installed data folder (it holds the marker kInstallMarker): results do not go inside
  /// it; a relative default out_dir resolves against the current directory instead.
  bool installed = false;
};

/// The file `cmake --install` writes at the top of <prefix>/share/gpumux.
inline constexpr const char* kInstallMarker = ".gpumux-install";

/// Finds the data, in this order (the first folder holding traces/models wins):
///  1. $GPUMUX_ROOT, when set (an explicit choice; an error when it has no traces/models);
///  2. the install layout beside the program: <dir of the executable>/<GPUMUX_DATA_FROM_BIN>
///     (../share/gpumux by default), the executable read from /proc/self/exe;
///  3. `start` and its ancestors (a source checkout, the current directory by default);
///  4. the executable's folder and its ancestors (a build tree inside the checkout).
/// Throws UsageError naming every place searched when none holds traces/models.
[[nodiscard]] DataRoot locate_data_root(const std::filesystem::path& start,
                                        const std::filesystem::path& executable);

/// The running program's path (/proc/self/exe); empty when it cannot be read.
[[nodiscard]] std::filesystem::path current_executable();

}  // namespace gpumux
