// The sweep file (experiments/sweeps/*.json, documented in docs/configuration.md): a base
// config, settings for every point, and either a grid (cartesian product) or a list of runs.
// Parsing is pure (no file-system access), so the parser can be fuzzed.
#pragma once

#include <string>
#include <vector>

namespace gpumux::cli {

struct SweepPoint {
  std::string label;                   ///< the point's folder name under out_dir (safe name)
  std::vector<std::string> overrides;  ///< the point's own "key=value" settings
};

struct SweepFile {
  std::string name;                 ///< safe name (letters, digits, '_', '-', '.')
  std::string base;                 ///< the base config, relative to the repository root
  std::string out_dir;              ///< as written; default results/<name>
  bool out_dir_given = false;       ///< out_dir came from the file (for messages)
  std::vector<std::string> common;  ///< "key=value" for every point: set, then quick.set
  std::vector<SweepPoint> points;   ///< in file order (grid: keys sorted, values in order)
};

/// Parses a sweep file's text. `quick` applies its "quick" section (smaller traces). Throws
/// ConfigError naming `file` and the key: bad JSON, unknown keys, unsafe names or labels, two
/// labels naming the same folder.
[[nodiscard]] SweepFile parse_sweep_text(const std::string& text, const std::string& file,
                                         bool quick = false);

}  // namespace gpumux::cli
