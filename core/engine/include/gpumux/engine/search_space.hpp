// A tuning job's hyper-parameter search space: named dimensions (uniform, log-uniform,
// integer, or a list of choices) and the operations tuners need on it: draw a point, list a
// grid, perturb a point (PBT's explore step) and map a point to unit coordinates (the
// learning curves' input). A point (a trial's config) is a JSON object {name: value}.
//
// Thread rules: a SearchSpace is immutable after construction; the random operations take
// the caller's generator, so determinism follows the caller's seed.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpumux {

enum class DimKind : std::uint8_t { Uniform, LogUniform, Integer, Choice };

struct SearchDim {
  std::string name;
  DimKind kind = DimKind::Uniform;
  double lo = 0.0;  ///< Uniform/LogUniform/Integer: inclusive bounds (LogUniform: lo > 0)
  double hi = 1.0;
  std::vector<nlohmann::json> choices;  ///< Choice: the values, in order (perturbation moves
                                        ///< to a neighbour)
};

class SearchSpace {
 public:
  SearchSpace() = default;
  explicit SearchSpace(std::vector<SearchDim> dims);

  /// {"lr": {"loguniform": [1e-3, 1]}, "layers": {"int": [2, 4]}, "m": {"uniform": [0, 1]},
  /// "cell": {"choice": ["LSTM", "GRU"]}}; throws ConfigError naming `file` and the key under
  /// `path` on bad input. Ranges are bounded so that every drawn value, grid point and unit
  /// coordinate is finite: a uniform range's width hi - lo and a log-uniform range's ratio
  /// hi / lo must be finite numbers, and an int range's bounds whole numbers of magnitude at
  /// most 2^53 (exact in a double and in an int64).
  static SearchSpace from_json(const nlohmann::json& j, const std::string& file,
                               const std::string& path = "search_space");
  /// How many points grid(points_per_dim) has (saturating at the largest uint64).
  [[nodiscard]] std::uint64_t grid_size(int points_per_dim) const;

  [[nodiscard]] const std::vector<SearchDim>& dims() const noexcept { return dims_; }

  /// One point drawn uniformly (log-uniformly for LogUniform dimensions).
  [[nodiscard]] nlohmann::json sample(std::mt19937_64& rng) const;
  /// The cartesian grid: Choice dimensions give their values, the others `points_per_dim`
  /// evenly spaced values (log-spaced for LogUniform, rounded and deduplicated for Integer).
  /// Order: the first dimension varies slowest.
  [[nodiscard]] std::vector<nlohmann::json> grid(int points_per_dim) const;
  /// PBT explore (Jaderberg et al. 2017; Ray Tune's explore): each dimension is resampled
  /// with probability `resample_probability`, else multiplied by 0.8 or 1.2 (Choice: moved to
  /// the previous or next value). Results are clamped to the bounds (our choice: Ray does not clamp
  /// plain numbers; the learning curves need points inside the space].
  [[nodiscard]] nlohmann::json perturb(const nlohmann::json& point, double resample_probability,
                                       std::mt19937_64& rng) const;
  /// Unit coordinates in [0,1] per dimension (log scale for LogUniform, index/(n-1) for Choice).
  [[nodiscard]] std::vector<double> unit(const nlohmann::json& point) const;

 private:
  std::vector<SearchDim> dims_;
};

}  // namespace gpumux
