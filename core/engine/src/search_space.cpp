// SearchSpace: sampling, grids, PBT perturbation and unit coordinates (search_space.hpp).
#include "gpumux/engine/search_space.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpumux/api/errors.hpp"

namespace gpumux {
namespace {

// PBT's perturbation factors (Jaderberg et al. 2017 §4.1 "perturb ... by a factor of 0.8 or
// 1.2"; Ray Tune PopulationBasedTraining default perturbation_factors=(1.2, 0.8)).
constexpr double kPerturbDown = 0.8;
constexpr double kPerturbUp = 1.2;

// The largest integer every double below it represents exactly (2^53).
constexpr double kMaxExactInt = 9007199254740992.0;

double clamp_to(const SearchDim& d, double v) {
  return std::clamp(v, d.lo, d.hi);
}

nlohmann::json number_value(const SearchDim& d, double v) {
  if (d.kind == DimKind::Integer) return static_cast<std::int64_t>(std::llround(clamp_to(d, v)));
  return clamp_to(d, v);
}

double uniform01(std::mt19937_64& rng) {
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

nlohmann::json draw(const SearchDim& d, std::mt19937_64& rng) {
  const double u = uniform01(rng);
  switch (d.kind) {
    case DimKind::Uniform:
      return d.lo + u * (d.hi - d.lo);
    case DimKind::LogUniform:
      return std::exp(std::log(d.lo) + u * (std::log(d.hi) - std::log(d.lo)));
    case DimKind::Integer:
      return static_cast<std::int64_t>(std::min(d.hi, std::floor(d.lo + u * (d.hi - d.lo + 1.0))));
    case DimKind::Choice: {
      auto k = static_cast<std::size_t>(u * static_cast<double>(d.choices.size()));
      return d.choices[std::min(k, d.choices.size() - 1)];
    }
  }
  return nullptr;
}

std::vector<nlohmann::json> grid_values(const SearchDim& d, int points) {
  if (d.kind == DimKind::Choice) return d.choices;
  std::vector<nlohmann::json> out;
  for (int k = 0; k < points; ++k) {
    const double f = points == 1 ? 0.5 : static_cast<double>(k) / (points - 1);
    const double v = d.kind == DimKind::LogUniform
                         ? std::exp(std::log(d.lo) + f * (std::log(d.hi) - std::log(d.lo)))
                         : d.lo + f * (d.hi - d.lo);
    nlohmann::json j = number_value(d, v);
    if (std::find(out.begin(), out.end(), j) == out.end()) out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

SearchSpace::SearchSpace(std::vector<SearchDim> dims) : dims_(std::move(dims)) {
  for (const SearchDim& d : dims_) {
    const bool numeric = d.kind != DimKind::Choice;
    if (numeric && !(d.lo <= d.hi)) throw Error("search space: '" + d.name + "' has lo > hi");
    if (d.kind == DimKind::LogUniform && d.lo <= 0.0) {
      throw Error("search space: log-uniform '" + d.name + "' needs lo > 0");
    }
    if (!numeric && d.choices.empty()) throw Error("search space: '" + d.name + "' no choices");
  }
}

SearchSpace SearchSpace::from_json(const nlohmann::json& j, const std::string& file,
                                   const std::string& path) {
  auto fail = [&](const std::string& key, const std::string& what) {
    throw ConfigError(file, path + "." + key, what);
  };
  if (!j.is_object()) throw ConfigError(file, path, "must be an object");
  std::vector<SearchDim> dims;
  for (const auto& [name, spec] : j.items()) {
    if (!spec.is_object() || spec.size() != 1) fail(name, "must be {\"<kind>\": [...]}");
    const std::string kind = spec.begin().key();
    const nlohmann::json& value = spec.begin().value();
    if (!value.is_array()) fail(name, "'" + kind + "' needs an array");
    SearchDim d{name, DimKind::Choice, 0.0, 0.0, {}};
    if (kind == "choice") {
      d.choices.assign(value.begin(), value.end());
      if (d.choices.empty()) fail(name, "'choice' needs at least one value");
    } else {
      if (value.size() != 2 || !value[0].is_number() || !value[1].is_number()) {
        fail(name, "'" + kind + "' needs [lo, hi]");
      }
      d.lo = value[0].get<double>();
      d.hi = value[1].get<double>();
      if (kind == "uniform")
        d.kind = DimKind::Uniform;
      else if (kind == "loguniform")
        d.kind = DimKind::LogUniform;
      else if (kind == "int")
        d.kind = DimKind::Integer;
      else
        fail(name, "unknown kind '" + kind + "' (uniform, loguniform, int, choice)");
      if (!(d.lo <= d.hi) || (d.kind == DimKind::LogUniform && d.lo <= 0.0)) {
        fail(name, "bad bounds");
      }
      // Wider ranges make draws, grid points or unit coordinates infinite or NaN, and so
      // the learning curve's metric (trial_epoch events).
      if (d.kind == DimKind::Uniform && !std::isfinite(d.hi - d.lo)) {
        fail(name, "'uniform' range too wide: hi - lo must be a finite number");
      }
      if (d.kind == DimKind::LogUniform && !std::isfinite(d.hi / d.lo)) {
        fail(name, "'loguniform' range too wide: hi / lo must be a finite number");
      }
      if (d.kind == DimKind::Integer &&
          (d.lo != std::floor(d.lo) || d.hi != std::floor(d.hi) || std::fabs(d.lo) > kMaxExactInt ||
           std::fabs(d.hi) > kMaxExactInt)) {
        fail(name, "'int' needs whole-number bounds in [-2^53, 2^53]");
      }
    }
    dims.push_back(std::move(d));
  }
  return SearchSpace(std::move(dims));
}

std::uint64_t SearchSpace::grid_size(int points_per_dim) const {
  std::uint64_t n = 1;
  for (const SearchDim& d : dims_) {
    const std::uint64_t k = grid_values(d, points_per_dim).size();
    n = k != 0 && n > std::numeric_limits<std::uint64_t>::max() / k
            ? std::numeric_limits<std::uint64_t>::max()
            : n * k;
  }
  return n;
}

nlohmann::json SearchSpace::sample(std::mt19937_64& rng) const {
  nlohmann::json out = nlohmann::json::object();
  for (const SearchDim& d : dims_) out[d.name] = draw(d, rng);
  return out;
}

std::vector<nlohmann::json> SearchSpace::grid(int points_per_dim) const {
  if (points_per_dim < 1) throw Error("search space: grid needs >= 1 point per dimension");
  std::vector<nlohmann::json> out{nlohmann::json::object()};
  for (const SearchDim& d : dims_) {
    std::vector<nlohmann::json> next;
    for (const nlohmann::json& partial : out) {
      for (const nlohmann::json& v : grid_values(d, points_per_dim)) {
        nlohmann::json p = partial;
        p[d.name] = v;
        next.push_back(std::move(p));
      }
    }
    out = std::move(next);
  }
  return out;
}

nlohmann::json SearchSpace::perturb(const nlohmann::json& point, double resample_probability,
                                    std::mt19937_64& rng) const {
  nlohmann::json out = point;
  for (const SearchDim& d : dims_) {
    const bool resample = uniform01(rng) < resample_probability;
    const bool up = uniform01(rng) < 0.5;
    if (resample) {
      out[d.name] = draw(d, rng);
    } else if (d.kind == DimKind::Choice) {
      const auto it = std::find(d.choices.begin(), d.choices.end(), point.at(d.name));
      auto k = static_cast<std::ptrdiff_t>(it - d.choices.begin());
      const auto last = static_cast<std::ptrdiff_t>(d.choices.size()) - 1;
      k = std::clamp<std::ptrdiff_t>(k + (up ? 1 : -1), 0, last);
      out[d.name] = d.choices[static_cast<std::size_t>(k)];
    } else {
      out[d.name] =
          number_value(d, point.at(d.name).get<double>() * (up ? kPerturbUp : kPerturbDown));
    }
  }
  return out;
}

std::vector<double> SearchSpace::unit(const nlohmann::json& point) const {
  std::vector<double> out;
  out.reserve(dims_.size());
  for (const SearchDim& d : dims_) {
    const nlohmann::json& v = point.at(d.name);
    double u = 0.5;
    if (d.kind == DimKind::Choice) {
      const auto it = std::find(d.choices.begin(), d.choices.end(), v);
      if (d.choices.size() > 1) {
        u = static_cast<double>(it - d.choices.begin()) / static_cast<double>(d.choices.size() - 1);
      }
    } else if (d.hi > d.lo) {
      const double x = v.get<double>();
      u = d.kind == DimKind::LogUniform ? std::log(x / d.lo) / std::log(d.hi / d.lo)
                                        : (x - d.lo) / (d.hi - d.lo);
    }
    out.push_back(std::clamp(u, 0.0, 1.0));
  }
  return out;
}

}  // namespace gpumux
