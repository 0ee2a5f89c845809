// Which points of a sweep one invocation handles (`--point K`, `--shard I/N`), the point's
// columns in the sweep's tables, and the guard against real-GPU points sharing a GPU under -j.
// Pure functions, any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gpumux/io/summary_csv.hpp"
#include "sweep_file.hpp"

namespace gpumux {
struct ExperimentConfig;
}

namespace gpumux::cli {

/// A shard "I/N": points K with K % N == I.
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
};

/// Parses "I/N" (decimal digits only, 0 <= I < N, N >= 1). Throws UsageError naming --shard
/// and the text ("" included).
[[nodiscard]] Shard parse_shard(const std::string& text);

/// Parses a point number K (decimal digits only, K < point_count). Throws UsageError naming
/// --point and the text ("" included) or the range.
[[nodiscard]] std::size_t parse_point(const std::string& text, std::size_t point_count);

/// The indices (0-based, in file order) of the points selected by `point` or `shard` (at most
/// one of them; neither selects every point): the texts of --point and --shard when given.
/// Throws UsageError for a malformed or empty selector, or a point out of range.
[[nodiscard]] std::vector<std::size_t> select_points(std::size_t point_count,
                                                     const std::optional<std::string>& point,
                                                     const std::optional<std::string>& shard);

/// The keys a sweep's points set (grid keys, or the union of the runs' "set" keys), in the
/// order they first appear: the sweep tables' columns after "point" and "label".
[[nodiscard]] std::vector<std::string> point_keys(const SweepFile& sweep);

/// The leading columns of point `index`'s rows in the sweep tables: point, label, then
/// "set.<key>" for each of `keys` (empty where the point does not set it).
[[nodiscard]] CsvColumns point_columns(const SweepFile& sweep, std::size_t index,
                                       const std::vector<std::string>& keys);

/// Refuses (UsageError) running points of a real GPU platform (cuda) `jobs` at a time unless
/// every such point names its GPUs (platform_params.gpus) and no two points share one: two
/// points on one GPU at once would each measure the other's load.
void check_parallel_gpus(const std::vector<const ExperimentConfig*>& points,
                         const std::vector<std::string>& labels, unsigned jobs);

}  // namespace gpumux::cli
