// Synthetic learning curves: the validation metric a trial reaches after each epoch, as a
// function of its config and a seed, for driving tuners without training anything.
//
// Source: no per-epoch learning-curve table with a licence that allows checking it in was
// found in a public GitHub repository (LCBench's data lives on figshare, NAS-Bench-201's on
// Google Drive/Hugging Face; searched 2026-11-25), so this is a documented parametric family:
// Domhan, Springenberg, Hutter, IJCAI 2015, Table 1 "pow3": y(t) = c - a * t^(-alpha).
// Here a curve starts at y(1) = y_start and tends to c as t grows:
//     y(t) = c - (c - y_start) * t^(-alpha)                (t = epoch, 1-based)
// with config-dependent parameters (assumption, our design):
//   - c, the asymptote, = y_start + (y_best - y_start) * q(x), where x is the config in unit
//     coordinates (SearchSpace::unit), o a per-seed optimum drawn uniformly in [0,1]^d, and
//     q(x) = exp(-mean_i (x_i - o_i)^2 / (2 * width^2)) in (0,1]: configs near the optimum
//     learn to a better final value, nearby configs have nearby curves (so PBT's small
//     perturbations and model-based samplers see a smooth landscape);
//   - alpha, the speed, drawn in [alpha_lo, alpha_hi] from a hash of (config, seed);
//   - per-epoch noise: Gaussian, sd `noise`, from a hash of (config, seed, epoch).
// For a Min metric (loss, perplexity) use y_start > y_best; the same formula applies.
// Everything is a pure function of (config, epoch, seed): the same inputs give the same value.
//
// Thread rules: immutable after construction; metric() may be called from any thread.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/engine/search_space.hpp"

namespace gpumux {

struct LearningCurveParams {
  // Defaults are our choices, not Fluid's numbers.
  double y_start = 0.1;   ///< metric after epoch 1 (chance accuracy of a 10-class task)
  double y_best = 0.95;   ///< asymptote of the best config (Fluid's CIFAR-10 target: 0.90)
  double width = 0.25;    ///< landscape width in unit coordinates
  double alpha_lo = 0.3;  ///< pow3 exponent range (curves reach half their gain in 2-10
  double alpha_hi = 1.0;  ///< epochs, like the Fluid workloads' first epochs)
  double noise = 0.005;   ///< sd of per-epoch noise, metric units
};

class LearningCurve {
 public:
  LearningCurve(SearchSpace space, std::uint64_t seed, LearningCurveParams p = {});

  /// The metric after `epoch` epochs (epoch >= 1) of a trial with `config`.
  [[nodiscard]] double metric(const nlohmann::json& config, int epoch) const;
  /// The noise-free asymptote c of `config` (for tests and for choosing targets).
  [[nodiscard]] double asymptote(const nlohmann::json& config) const;
  [[nodiscard]] const std::vector<double>& optimum() const noexcept { return optimum_; }

 private:
  [[nodiscard]] std::uint64_t key(const nlohmann::json& config) const;

  SearchSpace space_;
  std::uint64_t seed_;
  LearningCurveParams p_;
  std::vector<double> optimum_;
};

}  // namespace gpumux
