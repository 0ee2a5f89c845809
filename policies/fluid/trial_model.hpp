// Fluid's runtime-vs-resources model of one trial (Fluid, MLSys'21, §4.1, §4.2.2, App. A):
// a trial is a rectangle of width w (GPUs, real-valued) and height h_{i,w} (runtime at width w).
//
//   packed       w in (0, 1):  h_{i,w} = h1 * alpha^(1/w - 1)       alpha in [1, c/(c-1))
//   distributed  w in [1, d]:  h_{i,w} = (h1 / w) * beta^(w - 1)     beta  in [1, 1 + 1/d)
//
// alpha = beta = 1 is the paper's ideal model ("without overheads", Theorem 1): packing is free
// (a trial on 1/c of a GPU runs as fast as alone, the paper's premise that one trial leaves most
// of a GPU idle) and data parallelism scales linearly.
//
// Units: planning quantities, not simulation time. Heights are seconds as double (the water
// level and the model's powers are real-valued); the engine converts to TimeNs at its boundary.
// Widths are GPUs as double: 1/k for a trial packed k-per-GPU, an integer for whole GPUs.
// Pure functions; no state; safe from any thread.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

namespace gpumux::policies::fluid {

struct TrialModel {
  double h1_s = 0.0;   ///< (remaining) runtime on one whole GPU, seconds (the paper's h_{i,1})
  double alpha = 1.0;  ///< packing-interference factor, >= 1 (paper §4.1); 1 = ideal
  double beta = 1.0;   ///< scaling-overhead factor, >= 1 (paper §4.1); 1 = ideal
};

/// Throws std::invalid_argument unless h1_s >= 0 (finite), alpha >= 1 and beta >= 1.
inline void check_trial(const TrialModel& t) {
  if (!(t.h1_s >= 0.0) || !std::isfinite(t.h1_s)) {
    throw std::invalid_argument("fluid trial: h1_s must be finite and >= 0, got " +
                                std::to_string(t.h1_s));
  }
  if (!(t.alpha >= 1.0) || !(t.beta >= 1.0)) {
    throw std::invalid_argument("fluid trial: alpha and beta must be >= 1");
  }
}

/// h_{i,w} in seconds. The model does not know d: the caller keeps w <= d. Throws
/// std::invalid_argument for w <= 0 (or NaN).
[[nodiscard]] inline double height_s(const TrialModel& t, double width) {
  if (!(width > 0.0)) {
    throw std::invalid_argument("fluid trial: width must be > 0, got " + std::to_string(width));
  }
  if (width < 1.0) return t.h1_s * std::pow(t.alpha, 1.0 / width - 1.0);
  return t.h1_s / width * std::pow(t.beta, width - 1.0);
}

/// The rectangle's area w * h_{i,w} in GPU-seconds (the strip-packing "work" of the trial).
[[nodiscard]] inline double area_gpu_s(const TrialModel& t, double width) {
  return width * height_s(t, width);
}

}  // namespace gpumux::policies::fluid
